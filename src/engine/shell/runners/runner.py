# refinery's command runner (src/shell/runner-pool.ts starts one per concurrency slot).
# Usage: python3 runner.py OUT_FILE ERR_FILE
# Reads one JSON job per line on stdin: `s`, the script for `/bin/sh -c`; `a` (argv) and `r`
# (redirections: [fd, mode r|w|a, path]) when the command needs no shell, so it is started
# directly with posix_spawnp (a failed direct start is retried through sh); `e` and `u` set and
# unset environment variables. Each command gets its own process group, stdin from /dev/null,
# stdout and stderr in OUT_FILE and ERR_FILE (emptied first when the last command wrote to
# them). Answers `pid N`, then `exit CODE OUT_SIZE ERR_SIZE` (a signal N is 128+N).
# It says `ready` before it reads its first job, and exits before that where it cannot work
# (Python older than 3.8 has no posix_spawn): the pool then knows the job it already sent was
# never read, and gives it to the next runner program.
import os, sys, json
if not hasattr(os, 'posix_spawn'):
    sys.exit(3)
out_path, err_path = sys.argv[1], sys.argv[2]
MODES = {'r': os.O_RDONLY, 'w': os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 'a': os.O_WRONLY | os.O_CREAT | os.O_APPEND}
ofd = os.open(out_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
efd = os.open(err_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
base = [(os.POSIX_SPAWN_OPEN, 0, '/dev/null', os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, ofd, 1), (os.POSIX_SPAWN_DUP2, efd, 2)]
dirty = False
env0 = dict(os.environ)
read, write = sys.stdin.buffer.readline, sys.stdout.write
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
    if dirty:
        for fd in (ofd, efd):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
    try:
        pid = start(json.loads(raw))
    except (OSError, ValueError, KeyError):
        write('pid 0\nexit 127\n')
        sys.stdout.flush()
        continue
    write('pid %d\n' % pid)
    sys.stdout.flush()
    _, status = os.waitpid(pid, 0)
    sizes = (os.fstat(ofd).st_size, os.fstat(efd).st_size)
    dirty = sizes != (0, 0)
    code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    write('exit %d %d %d\n' % (code, sizes[0], sizes[1]))
    sys.stdout.flush()
