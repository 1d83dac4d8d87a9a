# The two README commands: `make repro` (set up + run the pipeline) and `make test`.
SHELL := /bin/bash
export PATH := $(CURDIR)/.venv/bin:$(PATH)
export DVC_NO_ANALYTICS := 1

.PHONY: setup-run setup-test repro test

setup-run:
	scripts/setup.sh run

setup-test:
	scripts/setup.sh test

repro: setup-run
	dvc repro
	@cat metrics/score.json

test: setup-test
	python -m pytest -q
