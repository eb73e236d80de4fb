# Two commands do all the set-up: `make demo` and `make test`. Both create .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint chromium clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	GPIOZERO_PIN_FACTORY=mock $(BIN)/domino-hub demo --port 8000

# Debian's Chromium drives the browser tests; nothing downloads a browser of its own.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; }

lint: $(STAMP)
	$(BIN)/ruff check .

# Two workers: the suite is single-threaded, and CI's machine has two cores.
TEST_WORKERS ?= 2

test: $(STAMP) chromium lint
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

clean:
	rm -rf $(VENV) build *.egg-info
