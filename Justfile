# refinery recipes. `just --list` shows them; every recipe runs the project's own CLI.

set shell := ["bash", "-eu", "-o", "pipefail", "-c"]

refinery := "node bin/refinery.js"

# Analyze MassGen logs: one schema-checked analysis per turn (default: the bundled example).
analyze logs="examples/massgen_logs":
    {{refinery}} run analyze --param logs={{logs}}

# Refine a deliverable with several model judges until they converge.
refine deliverable="examples/refine/deliverable.md" query="Make this document clear and correct" backends="replay-a,replay-b,replay-c":
    {{refinery}} run refine --param deliverable={{deliverable}} --param query="{{query}}" --param backends={{backends}}

# Keep every pipeline up to date as its inputs change.
watch *pipelines:
    {{refinery}} watch {{pipelines}}

# The whole test suite (what CI runs).
test:
    npm test

# Type-check and test.
check:
    npx tsc --noEmit -p tsconfig.json
    npm test

# All benchmarks.
bench: bench-graph bench-analyze

# refinery against make and ninja on generated DAGs (N = 1,000 and 10,000).
bench-graph *args:
    npx tsx bench/graph/run.ts {{args}}

# analyze-turn on a 1 GB events.jsonl against a naive JSON.parse pass.
bench-analyze gb="1":
    npx tsx bench/analyze/run.ts --gb {{gb}}

# Regenerate the bundled MassGen example logs.
gen-example:
    npx tsx scripts/gen-massgen-logs.ts --out examples/massgen_logs --seed 1
