# refinery's command runner (src/engine/shell/runner-pool.ts starts one per concurrency slot).
# Usage: python3 runner.py OUT_FILE ERR_FILE [TOKENS ADD]
# Reads one JSON job per line on stdin: `s`, the script for `/bin/sh -c`; `a` (argv) and `r`
# (redirections: [fd, mode r|w|a, path]) when the command needs no shell, so it is started
# directly with posix_spawnp (a failed direct start is retried through sh); `e` and `u` set and
# unset environment variables. Each command gets its own process group, stdin from /dev/null,
# stdout and stderr in OUT_FILE and ERR_FILE (emptied first when the last command wrote to
# them). Answers `pid N`, then `exit CODE OUT_SIZE ERR_SIZE` (a signal N is 128+N).
# It says `ready` before it reads its first job, and exits before that where it cannot work
# (Python older than 3.8 has no posix_spawn): the pool then knows the job it already sent was
# never read, and gives it to the next python, or spawns it from Node itself.
# With TOKENS (a FIFO, made if missing) the runners of a run share a jobserver, as make's do:
# the FIFO holds one byte per command that may run at once (this runner puts ADD of them in),
# a command starts once its runner took a byte and gives it back when it ends. More runners
# than that hold a job each, waiting, so a command starts as soon as another ends, without a
# round trip to refinery. A job still waiting is dropped by a `cancel` line: the answer is then
# `cancelled` instead of `pid`. A `cancel` that comes after its job started is ignored. After a
# command that failed, the runner keeps its token until it reads its next line (`release`, or a
# job): refinery first drops the jobs that wait, when the failure stops the run, so none of
# them starts after it.
import os, sys, json, select
if not hasattr(os, 'posix_spawn'):
    sys.exit(3)
out_path, err_path = sys.argv[1], sys.argv[2]
tokens = None
if len(sys.argv) > 4:
    try:
        os.mkfifo(sys.argv[3], 0o600)
    except FileExistsError:
        pass
    # Read and write: the open does not wait for another end, and the bytes in the FIFO last
    # while any runner has it open. Non-blocking: every waiting runner wakes when a byte comes,
    # one of them gets it.
    tokens = os.open(sys.argv[3], os.O_RDWR | os.O_NONBLOCK)
    os.write(tokens, b'+' * int(sys.argv[4]))
MODES = {'r': os.O_RDONLY, 'w': os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 'a': os.O_WRONLY | os.O_CREAT | os.O_APPEND}
ofd = os.open(out_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
efd = os.open(err_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
base = [(os.POSIX_SPAWN_OPEN, 0, '/dev/null', os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, ofd, 1), (os.POSIX_SPAWN_DUP2, efd, 2)]
dirty = False
held = False
env0 = dict(os.environ)
write = sys.stdout.write
pending = b''
def read():
    # A line of stdin (b'' at its end), read with os.read so that select sees what is unread.
    global pending
    while b'\n' not in pending:
        chunk = os.read(0, 65536)
        if not chunk:
            line, pending = pending, b''
            return line
        pending += chunk
    line, _, pending = pending.partition(b'\n')
    return line + b'\n'
def take_token():
    # True once this runner holds a token; False when the job was cancelled (or stdin ended) first.
    global pending
    while True:
        while b'\n' in pending:
            # Nothing but `cancel` comes while a job waits.
            if read().startswith(b'cancel'):
                return False
        ready, _, _ = select.select([tokens, 0], [], [])
        # stdin first: a `cancel` written before a token came is read before the token is taken.
        if 0 in ready:
            chunk = os.read(0, 65536)
            if not chunk:
                return False
            pending += chunk
            continue
        try:
            if os.read(tokens, 1):
                return True
        except BlockingIOError:
            pass
write('ready\n')
sys.stdout.flush()
def start(job):
    env = env0
    if job.get('e') or job.get('u'):
        env = dict(env0)
        env.update(job.get('e', {}))
        for k in job.get('u', ()):
            env.pop(k, None)
    argv = job.get('a')
    if argv:
        actions = list(base)
        for fd, mode, path in job.get('r', ()):
            actions[fd] = (os.POSIX_SPAWN_OPEN, fd, path, MODES[mode], 0o666)
        try:
            return os.posix_spawnp(argv[0], argv, env, file_actions=actions, setpgroup=0)
        except OSError:
            pass
    return os.posix_spawn('/bin/sh', ['/bin/sh', '-c', job['s']], env, file_actions=base, setpgroup=0)
while True:
    raw = read()
    if not raw:
        break
    if held:
        os.write(tokens, b'+')
        held = False
    if raw.startswith(b'cancel') or raw.startswith(b'release'):
        continue
    if tokens is not None and not take_token():
        write('cancelled\n')
        sys.stdout.flush()
        continue
    if dirty:
        for fd in (ofd, efd):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
    try:
        pid = start(json.loads(raw))
    except (OSError, ValueError, KeyError):
        held = tokens is not None
        write('pid 0\nexit 127\n')
        sys.stdout.flush()
        continue
    write('pid %d\n' % pid)
    sys.stdout.flush()
    _, status = os.waitpid(pid, 0)
    sizes = (os.fstat(ofd).st_size, os.fstat(efd).st_size)
    dirty = sizes != (0, 0)
    code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    if tokens is not None:
        if code == 0:
            os.write(tokens, b'+')
        else:
            held = True
    write('exit %d %d %d\n' % (code, sizes[0], sizes[1]))
    sys.stdout.flush()
