# refinery's command runner in perl (see runner.py and runner-pool.ts): perl starts in a few
# milliseconds where python takes 15 or more, which a run with a dozen commands feels.
# Usage: perl runner.pl OUT_FILE ERR_FILE
# Reads one job per line on stdin: `cSCRIPT` runs /bin/sh -c SCRIPT, `fFILE` runs /bin/sh FILE;
# `d` starts one program directly, as make does for a command without shell syntax: its fields,
# separated by \x1f, are the script (run through sh if the program or a redirection cannot be
# opened, so the error and exit code are sh's), the count and pairs of variables to set, the
# count and names of variables to unset, the count and words of argv, and the count and triples
# (fd, r|w|a, path) of redirections, in the order written. Each command runs in a process group
# of its own, stdin from /dev/null, stdout and stderr to OUT_FILE and ERR_FILE. Answers `pid N`,
# then `exit CODE OUT_SIZE ERR_SIZE` (a signal N is 128+N; the sizes spare refinery opening the
# files when they are empty, as most are). Says `ready` before it reads its first job.
$| = 1;
my ($outfile, $errfile) = @ARGV;
my %MODES = (r => '<', w => '>', a => '>>');

sub standard_streams {
  open(STDIN, '<', '/dev/null');
  open(STDOUT, '>', $outfile);
  open(STDERR, '>', $errfile);
}

# In the child: the program itself with its redirections, else what sh makes of the script.
sub start_direct {
  my @fields = split /\x1f/, $_[0], -1;
  my $script = shift @fields;
  my $count = shift @fields;
  my %set = splice(@fields, 0, 2 * $count);
  $count = shift @fields;
  my @unset = splice(@fields, 0, $count);
  $count = shift @fields;
  my @argv = splice(@fields, 0, $count);
  $count = shift @fields;
  my @redirects = splice(@fields, 0, 3 * $count);
  @ENV{keys %set} = values %set;
  delete @ENV{@unset};
  my $opened = 1;
  while (@redirects) {
    my ($fd, $mode, $path) = splice(@redirects, 0, 3);
    my $handle = $fd == 0 ? \*STDIN : $fd == 1 ? \*STDOUT : \*STDERR;
    next if open($handle, $MODES{$mode}, $path);
    $opened = 0;
    last;
  }
  exec { $argv[0] } @argv if $opened && @argv;
  standard_streams();
  exec('/bin/sh', '-c', $script);
}

print "ready\n";
while (defined(my $job = <STDIN>)) {
  chomp $job;
  my $pid = fork();
  if (!defined $pid) { print "pid 0\nexit 127\n"; next; }
  if ($pid == 0) {
    setpgrp(0, 0);
    standard_streams();
    if ($job =~ s/^d//) { start_direct($job); }
    elsif ($job =~ s/^c//) { exec('/bin/sh', '-c', $job); }
    else { $job =~ s/^f//; exec('/bin/sh', $job); }
    exit 127;
  }
  # The group is set on both sides of the fork (as shells do), so it exists once `pid` is
  # said: a kill of the group right after must not miss a child that has not run yet.
  setpgrp($pid, $pid);
  print "pid $pid\n";
  waitpid($pid, 0);
  my $st = $?;
  print 'exit ', (($st & 127) ? 128 + ($st & 127) : ($st >> 8)), ' ', (-s $outfile) || 0, ' ', (-s $errfile) || 0, "\n";
}
