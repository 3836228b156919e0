#!/bin/bash
# select/topoml vs stock cons_tres on a torus of 1024 emulated nodes.
export FAMILY=torus
. "${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}/select/stock_compare_lib.sh"
