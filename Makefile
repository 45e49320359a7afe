# Two entry points for a newcomer: `make demo` and `make test`.
# Both create .venv and install sapwood with its extras; nothing else is assumed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# shap is the reference of the TreeSHAP tests (their only use of it).
EXTRAS := test,docs,xgboost,lightgbm,catboost,shap,dask,parquet,excel,knockoffs,skops
PYTEST_WORKERS ?= 2

.PHONY: install demo test lint test-fast test-boundscheck bench clean fuzz docs wheel

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	# Compile the Numba kernels now, in parallel, so that `make demo` does not wait. Best
	# effort: what fails to compile here compiles on first use.
	$(BIN)/sapwood warmup || echo "sapwood warmup did not finish: kernels compile on first use"
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/sapwood demo --report sapwood-report.html

lint: install
	$(BIN)/ruff check src tests benchmarks

# Kernels run once with Numba's bounds checking on (a separate cache, since the
# flag changes the compiled code), then the whole suite runs normally.
test-boundscheck: install
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(CURDIR)/.numba-boundscheck \
		$(BIN)/python -m pytest -q -m "not slow" -p no:randomly tests/kernels \
		tests/importance/test_permutation_kernels.py

test-fast: install
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS)

# Headless Chromium for the report render test (tests/cli/test_report_render.py). Best
# effort: where apt-get cannot install it (no root, no network) the test skips.
.PHONY: chromium
chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "chromium not installed; the report render test will skip"

test: chromium lint test-boundscheck test-fast docs

# The documentation site, offline, into docs/_build/html: the gallery's examples run at
# build time, and any warning (a broken example, docstring or reference) fails it.
docs: install
	rm -rf docs/_build docs/auto_examples
	$(BIN)/python -m sphinx -b html -W --keep-going -q docs docs/_build/html

# A wheel and a source distribution in dist/ (python -m build fetches its own build
# environment), then the wheel's extras checked against the README's.
wheel: install
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	SAPWOOD_WHEEL=$$(ls dist/*.whl) $(BIN)/python -m pytest -q -p no:randomly tests/test_packaging.py

# A long fuzzing run of every model reader and of CSV input (a short one is part of the
# suite). A failing input is kept in the reader's or the CSV's fuzz_corpus/ folder
# (found-*.*, its smallest form), which the suite then reads on every run.
FUZZ_ENV := SAPWOOD_FUZZ_EXAMPLES=3000 SAPWOOD_FUZZ_RANDOM=1
fuzz: install
	$(FUZZ_ENV) SAPWOOD_FUZZ_CORPUS=$(CURDIR)/tests/adapters/fuzz_corpus \
		$(BIN)/python -m pytest -q -p no:randomly tests/adapters/test_fuzz_readers.py
	$(FUZZ_ENV) SAPWOOD_FUZZ_CORPUS=$(CURDIR)/tests/cli/fuzz_corpus \
		$(BIN)/python -m pytest -q -p no:randomly tests/cli/test_fuzz_csv.py

bench: install
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .numba-boundscheck build dist src/*.egg-info docs/_build docs/auto_examples
