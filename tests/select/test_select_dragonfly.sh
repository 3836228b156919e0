#!/bin/bash
# select/topoml vs stock cons_tres on a dragonfly of 1024 emulated nodes.
export FAMILY=dragonfly
. "${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}/select/stock_compare_lib.sh"
