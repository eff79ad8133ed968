// `refinery logs` usage: kept apart so --help and argument errors load none of the subcommands' code.

export const SUMMARY_USAGE = `  refinery logs summary [--logs-dir D] [--reports DIR] [--since YYYY-MM-DD] [--group-by model|agent|config] [--json] [--no-analyze]`;

export const SUMMARY_HELP = `summary  Every run under the logs folder added up: runs, cost and duration per day, the costliest and
         slowest runs, enforcement retries, API errors, winners, unanimous votes, sessions continued
         with --session-id. Turns without a current analysis are analyzed first (--no-analyze: not).
         Writes logs-summary.json and LOGS_SUMMARY.md into the reports folder (--reports, default: the
         logs folder when it is inside the project, else .refinery/massgen/); --json prints the JSON.
         The analyze pipeline's summary stage alone writes runs-summary.json and RUNS_SUMMARY.md there.`;

export const BUNDLE_USAGE = `  refinery logs bundle RUN [--turn N] [--out FILE.html] [--logs-dir D] [--redact PATTERN]... [--no-redact]`;

export const BUNDLE_HELP = `bundle   One turn as one HTML file that opens anywhere with no network: the report with its Mermaid
         drawn, every answer, every vote with its reason, the timeline, the config. RUN is a log_* name
         under the logs folder, a # of \`refinery logs list\` (1: the newest), or the path of a log_*,
         turn_N or attempt_M folder (default turn: the last). Before anything is written, absolute
         paths become relative to the run, home folders, API keys and tokens (sk-..., Bearer ...,
         AIza..., ghp_..., xoxb-..., values of key variables of the environment and of
         refinery.config.yaml, secret keys of the MassGen config) and e-mail
         addresses are removed; --redact PATTERN (a regular expression) removes more. The bundle lists
         what it removed, by kind. --no-redact writes everything as it is. The file goes to
         .refinery/bundles/massgen-<log>-turn_<N>.html (its path is printed); --out FILE.html puts it elsewhere.`;

export const TOOLS_USAGE = `  refinery logs tools [RUN] [--logs D] [--turn N] [--sort time|calls] [--by-agent] [--json]`;

export const TOOLS_HELP = `tools    The tool calls of one turn (default: the last turn of the newest session), per tool as
         \`massgen logs tools\` shows them: calls, failures, denied (a permission hook blocked them:
         they never ran and are not failures), total and mean time of the calls that ran. --by-agent:
         one row per agent and tool. --sort calls: most calls first (default: most time). --json for scripts.`;

export const LOGS_USAGE = `Usage:
  refinery logs list [--logs-dir D] [--reports DIR] [--analyzed|--unanalyzed] [--limit N] [--json]
  refinery logs analyze [RUN] [--logs-dir D] [--log-dir PATH] [--reports DIR] [--turn N] [--stale-after SECONDS]
  refinery logs analyze --mode self [RUN] [--turn N] [--force] [--backends a,b,c] [--config FILE] [--budget-usd N]
${SUMMARY_USAGE}
${TOOLS_USAGE}
${BUNDLE_USAGE}

list     Recent MassGen sessions, newest first: timestamp, wall-clock duration, cost, analyzed turns, question,
         and the folder a --session-id continuation continues. A turn is analyzed when its ANALYSIS_REPORT.md
         is non-empty and newer than every other file of the turn.
analyze  Analyze one turn of a session (default: the last turn of the newest session) and write
         analysis.json + ANALYSIS_REPORT.md into turn_N/ (the session root for legacy flat logs).
         RUN is a log_* name, a # of \`refinery logs list\` (1: the newest) or a path, as for bundle;
         --log-dir takes a session root (log_*), a turn_N dir or an attempt_M dir.
         --mode self: then three model analysts (correctness, efficiency, behavior) judge the facts; their
         findings, each checked against its evidence, follow the report (and go to self-analysis.json).
         Backends: --backends (round-robin over the three), else self_analysis.backends in the --config file
         (default refinery.config.yaml), else its first OpenAI-compatible backend. An existing
         self-analysis is kept without --force. Exit 1: partial (an analyst failed; the report is written);
         exit 2: an unknown backend, a missing key or program, before any call. See docs/self-analysis.md.
${SUMMARY_HELP}
${TOOLS_HELP}
${BUNDLE_HELP}

--logs-dir defaults to .massgen/massgen_logs under the project root, as in MassGen. Reports go beside each
turn when the logs are given inside the project; logs given as an absolute path or one starting with ..
get them under .refinery/massgen/<log_*>/<turn_N>/ instead; --reports DIR puts them under DIR.`;
