#!/usr/bin/env node
// A scripted worker agent for the refine loop: it reads its delegate instructions on stdin, does the
// next tasks the way a coding agent would (here: each task becomes a line in a "Changes" section of
// the deliverable's Markdown files), and publishes started / progress / completed by running the exact
// commands the instructions give. Usage: node scripted-worker.mjs   (instructions on stdin, cwd = project).
// FAKE_WORKER_FAIL=1 publishes error instead of completed, without touching any file.
// WORKER_INPUT=tmux-lines: it runs in a tmux pane instead and serves every job pasted there (one line each,
// naming the job's instructions file), until the pane is closed.
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';

/** Splits a POSIX-shell command line as the instructions quote it ('...' with '\'' escapes, bare words). */
function shellWords(line) {
  const words = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated quote in: ${line}`);
      word += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (ch === ' ' || ch === '\t') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** Runs the command of the instructions' `On <label> ...: COMMAND` line, its `<placeholder>` detail replaced. */
function publish(instructions, label, detail) {
  const line = instructions.split('\n').find((l) => l.startsWith(`On ${label} `) && l.includes(': '));
  if (!line) throw new Error(`the instructions have no 'On ${label} ...:' line`);
  const argv = shellWords(line.slice(line.indexOf(': ') + 2)).map((w) => (/^<.*>$/.test(w) ? detail : w));
  const [file, ...args] = argv;
  const result = spawnSync(file, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`publishing '${label}' failed with exit code ${result.status}`);
}

/** One job: do the next tasks its instructions name, publishing as it goes. */
function work(instructions) {
  publish(instructions, 'start', 'reading next tasks');
  if (process.env.FAKE_WORKER_FAIL === '1') {
    publish(instructions, 'failure', 'scripted failure');
    return;
  }
  const tasksFile = /(\S+\/round_(\d+)\/next_tasks\.json)/.exec(instructions);
  const files = /carry out the tasks:\s*([\s\S]+?)\. Change no other files/.exec(instructions);
  if (!tasksFile || !files) {
    publish(instructions, 'failure', 'the prompt names no next_tasks.json or no deliverable files');
    return;
  }
  const plan = JSON.parse(readFileSync(tasksFile[1], 'utf8'));
  const tasks = plan.status === 'ok' ? plan.tasks : [];
  const targets = files[1]
    .split(/,\s*/)
    .map((f) => f.trim())
    .filter((f) => f.endsWith('.md'));
  publish(instructions, 'progress', `${tasks.length} tasks, ${targets.length} files`);
  const section = [`\n## Changes (round ${Number(tasksFile[2])})\n`, ...tasks.map((t) => `- ${t.id}: ${t.description}`), ''].join('\n');
  for (const file of targets) appendFileSync(file, section);
  publish(instructions, 'success', `did ${tasks.map((t) => t.id).join(', ') || 'nothing'}`);
}

if (process.env.WORKER_INPUT === 'tmux-lines') {
  // Like a TUI agent in a tmux pane: each pasted line names a job's instructions file.
  const { createInterface } = await import('node:readline');
  for await (const line of createInterface({ input: process.stdin })) {
    const file = /Read (\S+) and follow it/.exec(line)?.[1];
    if (file) work(readFileSync(file, 'utf8'));
  }
} else {
  work(readFileSync(0, 'utf8'));
}
