# The least it costs to start a full build's commands: each one started with os.posix_spawn
# (vfork-like, no shell: its output redirection made by the spawn itself), two at a time, in
# the order given, with no dependency order kept, nothing hashed, checked or recorded. Run in a
# folder where every command's inputs exist already (make's outputs), so each one succeeds
# whatever the order; the full-build floor writes its outputs elsewhere, as new files.
# Prints the milliseconds the loop took (the interpreter's own start left out: with a dozen
# commands, as a touch runs, it would weigh more than they do).
# Usage: python3 spawn-floor.py commands.txt JOBS   (a line: argv words, then " > " and the output)
import os
import sys
import time

commands_file, jobs = sys.argv[1], int(sys.argv[2])
with open(commands_file) as f:
    commands = [line.rstrip('\n').split(' > ') for line in f if line.strip()]
env = os.environ
started = time.perf_counter()
running = 0
failed = 0
for words, output in commands:
    if running == jobs:
        _, status = os.wait()
        running -= 1
        failed += status != 0
    argv = words.split(' ')
    actions = [(os.POSIX_SPAWN_OPEN, 1, output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    os.posix_spawnp(argv[0], argv, env, file_actions=actions)
    running += 1
while running > 0:
    _, status = os.wait()
    running -= 1
    failed += status != 0
print('%.3f' % ((time.perf_counter() - started) * 1000))
sys.exit(1 if failed else 0)
