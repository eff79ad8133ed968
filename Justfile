# refinery recipes. `just --list` shows them; every recipe runs the project's own CLI.

set shell := ["bash", "-eu", "-o", "pipefail", "-c"]

refinery := "node bin/refinery.js"

# KEY=VALUE words are pipeline params (logs=PATH; default: the bundled example), other words flags.
# Analyze MassGen logs: one schema-checked analysis.json + ANALYSIS_REPORT.md per turn.
[positional-arguments]
analyze *args:
    #!/usr/bin/env bash
    set -euo pipefail
    argv=()
    for a in "$@"; do case "$a" in *=*) argv+=(--param "$a") ;; *) argv+=("$a") ;; esac; done
    exec node bin/refinery.js run analyze "${argv[@]}"

# just analyze-self [backends=a,b,c] [runs=log_2026*] [logs=PATH] [budget_usd=5]: KEY=VALUE words are params, other words flags.
# Model analysts (correctness, efficiency, behavior) over every turn's facts; only new turns are asked. See docs/self-analysis.md.
[positional-arguments]
analyze-self *args:
    #!/usr/bin/env bash
    set -euo pipefail
    argv=()
    for a in "$@"; do case "$a" in *=*) argv+=(--param "$a") ;; *) argv+=("$a") ;; esac; done
    exec node bin/refinery.js run self-analysis "${argv[@]}"

# just refine deliverable=a.md,b.ts query="what it must do" backends=claude,codex,gemini
# (default: the bundled offline example; backends are names in refinery.config.yaml).
# Refine a deliverable with several model judges until they converge.
[positional-arguments]
refine *args:
    #!/usr/bin/env bash
    set -euo pipefail
    argv=()
    given=" $* "
    # No deliverable given: the bundled offline example (recorded judges, no network, no key).
    if [[ "$given" != *" deliverable="* ]]; then
      argv+=(--param task_file=examples/refine/task.md
             --param deliverable=examples/refine/deliverable/README.md,examples/refine/deliverable/slugify.mjs
             --param previous=examples/refine/previous/README.md --param writer=example-writer
             --param judges=example-judge-a,example-judge-b,example-judge-c --param guard=example-judge-b)
    fi
    for a in "$@"; do
      case "$a" in
        backends=*) argv+=(--param "judges=${a#backends=}") ;;
        *=*) argv+=(--param "$a") ;;
        *) argv+=("$a") ;;
      esac
    done
    exec node bin/refinery.js run refine "${argv[@]}"

# Keep every pipeline up to date as its inputs change.
watch *pipelines:
    {{refinery}} watch {{pipelines}}

# The live dashboard: pipelines, runs, MassGen analyses, refine sessions, jobs (prints its URL with a token).
ui *args:
    {{refinery}} ui {{args}}

# The dashboard screenshots the README shows (docs/images/ui-*.png), from the bundled examples, in chromium.
screenshots:
    npx tsx scripts/ui-screenshots.ts

# The whole test suite (what CI runs).
test:
    npm test

# Format and lint check, type-check and test.
check:
    npm run lint
    npx tsc --noEmit -p tsconfig.json
    npm test

# Format the tree (Biome).
format:
    npm run format

# All benchmarks.
bench: bench-graph bench-analyze bench-analyze-run bench-refine bench-jobs bench-ui bench-cache bench-massgen bench-massgen-run bench-redact bench-workers

# Three judges at 300 ms against one judge alone; a cached rerun costs nothing.
bench-refine:
    npx tsx bench/refine/run.ts

# The dashboard in chromium: first render of 1,000 MassGen runs and of 10,000 stages; event-to-pixel latency.
bench-ui:
    npx tsx bench/ui/run.ts
    npx tsx bench/ui/stream-memory.ts

# The dashboard's memory with 40 event-stream clients that never read, during a run that logs 200,000 lines (target < 300 MB).
bench-ui-stream lines="200000" clients="40":
    npx tsx bench/ui/stream-memory.ts --lines {{lines}} --clients {{clients}}

# The remote cache (nginx on 127.0.0.1): analyze over 200 generated runs and the refine example, cold local vs warm remote.
bench-cache runs="200":
    npx tsx bench/cache/run.ts --runs {{runs}}

# 120 stages of sleep 0.5 s: a coordinator and 3 `refinery worker -j 2` (mosquitto + nginx) against one local run at -j 2.
bench-workers stages="120":
    npx tsx bench/workers/run.ts --stages {{stages}}

# 1,000 concurrent delegated jobs through mosquitto, restarted once mid-run.
bench-jobs:
    npx tsx bench/jobs/run.ts

# refinery against make and ninja on generated DAGs (N = 1,000 and 10,000).
bench-graph *args:
    npx tsx bench/graph/run.ts {{args}}

# analyze-turn on a 1 GB events.jsonl against a naive JSON.parse pass.
bench-analyze gb="1":
    npx tsx bench/analyze/run.ts --gb {{gb}}

# `refinery run analyze` on a 1 GB events.jsonl: peak RSS of the whole process tree must stay <= 256 MB.
bench-analyze-run gb="1" limit_mb="256":
    npx tsx bench/analyze/run-pipeline.ts --gb {{gb}} --limit-mb {{limit_mb}}

# Regenerate schemas/pipeline.schema.json from the zod schema of pipeline files.
gen-pipeline-schema:
    npx tsx scripts/gen-pipeline-schema.ts

# `refinery logs summary` over 1,000 generated runs (first, after one new run: target < 0.5 s) and
# `refinery logs list` against a plain Python loop over each run's status.json.
bench-massgen runs="1000" reps="5":
    npx tsx bench/massgen/run.ts --runs {{runs}} --reps {{reps}}

# `refinery run analyze` over 1,000 generated runs: nothing new (target <= 1.0 s, 150 MB RSS), one new run (<= 1.5 s).
bench-massgen-run runs="1000" reps="5":
    npx tsx bench/massgen/run-analyze.ts --runs {{runs}} --reps {{reps}}

# Regenerate the bundled MassGen example logs.
gen-example:
    npx tsx scripts/gen-massgen-logs.ts --out examples/massgen_logs --seed 1

# just experiment configs='configs/*.yaml' questions=questions.txt [massgen="uv run massgen"] [repeat=3] [timeout=900]
# Run MassGen on a grid of configs × questions × repeats, analyze each run, sum the grid up (-k: one failed run does not stop the others).
[positional-arguments]
experiment *args:
    #!/usr/bin/env bash
    set -euo pipefail
    argv=(-k)
    for a in "$@"; do case "$a" in *=*) argv+=(--param "$a") ;; *) argv+=("$a") ;; esac; done
    exec node bin/refinery.js run experiments "${argv[@]}"

# A 4 × 3 grid of a fake MassGen taking 2 s per run, at -j 4: wall time, progress events, an unchanged rerun.
bench-experiments:
    npx tsx bench/experiments/run.ts

# The redactor over a 200k-line run journal: per event (every run pays it), per line, per 1 MB piece.
bench-redact lines="200000" reps="3":
    npx tsx bench/security/run.ts --lines {{lines}} --reps {{reps}}
