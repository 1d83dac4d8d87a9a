"""Re-quantize tensors of a GGUF file (dequantize, then quantize to another type), metadata copied.

    pip install gguf   # not a project dependency: this is a one-off benchmark helper
    python bench/requantize_gguf.py IN.gguf OUT.gguf Q8_0 --from Q4_K,Q6_K --keep output.weight,token_embd.weight

Issue 25 asks whether llama.cpp runs the 1.5B faster in another weight format on this CPU. The shipped
file is Q4_K_M (Q4_K, with Q6_K for ffn_down, attn_v and the output). This writes variants from it, which
bench/llm_settings.py then times against the same requests (`--gguf NAME=PATH`). Results and verdict:
docs/performance.md, "Weight formats".
"""
from __future__ import annotations

import argparse

from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter, quants


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("target", help="the new tensor type, e.g. Q8_0 or Q4_0")
    ap.add_argument("--from", dest="from_types", default="Q4_K,Q6_K", help="tensor types to convert")
    ap.add_argument("--keep", default="output.weight", help="tensor names left as they are")
    args = ap.parse_args()
    target = GGMLQuantizationType[args.target]
    from_types = {GGMLQuantizationType[t] for t in args.from_types.split(",")}
    keep = set(args.keep.split(","))
    reader = GGUFReader(args.src)
    writer = GGUFWriter(args.dst, arch=reader.fields["general.architecture"].contents())
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue  # the writer writes these itself
        kind = field.types[0]
        writer.add_key_value(key, field.contents(), kind,
                             sub_type=field.types[-1] if kind == GGUFValueType.ARRAY else None)
    for t in reader.tensors:
        if t.tensor_type in from_types and t.name not in keep:
            data = quants.quantize(quants.dequantize(t.data, t.tensor_type), target)
            writer.add_tensor(t.name, data, raw_shape=data.shape, raw_dtype=target)
        else:
            writer.add_tensor(t.name, t.data, raw_shape=t.data.shape, raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
