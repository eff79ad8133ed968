# refinery's command runner where there is no python3 (see runner.py and runner-pool.ts).
# Usage: perl runner.pl OUT_FILE ERR_FILE
# Reads one job per line on stdin: `cSCRIPT` runs /bin/sh -c SCRIPT, `fFILE` runs /bin/sh FILE,
# in a process group of its own, stdin from /dev/null, stdout and stderr to OUT_FILE and
# ERR_FILE. Answers `pid N`, then `exit CODE` (a signal N is 128+N). Says `ready` before it
# reads its first job, as runner.py does.
$| = 1;
my ($outfile, $errfile) = @ARGV;
print "ready\n";
while (defined(my $job = <STDIN>)) {
  chomp $job;
  my $pid = fork();
  if (!defined $pid) { print "pid 0\nexit 127\n"; next; }
  if ($pid == 0) {
    setpgrp(0, 0);
    open(STDIN, '<', '/dev/null');
    open(STDOUT, '>', $outfile);
    open(STDERR, '>', $errfile);
    if ($job =~ s/^c//) { exec('/bin/sh', '-c', $job); } else { $job =~ s/^f//; exec('/bin/sh', $job); }
    exit 127;
  }
  print "pid $pid\n";
  waitpid($pid, 0);
  my $st = $?;
  print 'exit ', (($st & 127) ? 128 + ($st & 127) : ($st >> 8)), "\n";
}
