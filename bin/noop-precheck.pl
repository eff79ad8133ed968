# refinery's no-op pre-check: compares the last no-op record with the disk while Node starts.
#
# A cold `refinery run` spends ~50 ms starting Node, and then stats every file its last run
# looked at (20,000 of them take Node ~45 ms). Perl starts in ~3 ms and stats them in 35-50 on
# a second core, so bin/quick-client.pl, just before it hands a `refinery run` to Node, starts
# this in a process of its own: by the time Node asks, the answer is waiting in a pipe. Node
# uses it only for the record it would have read anyway (the same file: inode, size and mtime,
# see src/engine/state/noop-precheck.ts) and in the same folder; anything else, or no answer at
# all, and Node stats as it always did. The answer only ever narrows what Node stats: a file
# is left out only when its size, mtime (to the nanosecond) and inode are what the record holds,
# the very comparison Node makes (run-manifest.ts, compareWithLastRun).
#
# The stats are statx(2) through perl's syscall(), since perl's own stat has no nanoseconds;
# so only Linux on x86_64 and arm64, where the call's number and its struct are known. Its
# answer, on the inherited pipe, is one line and a bitmap, bit i set for each file that may
# have changed:
#
#     refinery precheck 1 <record name> <inode> <size> <mtime s> <mtime ns> <files>\n<bitmap>
use strict;

# statx(2): the call's number here, or undef where it is not known. Only a 64-bit perl (its
# pointers and integers 8 bytes: not x32, not a 32-bit perl on a 64-bit kernel) on Linux; the
# machine is read from /proc (0.1 ms) rather than Config.pm (~2 ms), which older kernels need.
sub statx_number {
  my ($arch_file) = @_;
  return undef unless $^O eq 'linux' && length(pack 'p', '') == 8 && length(pack 'j', 0) == 8;
  my $machine;
  if (open(my $handle, '<', $arch_file // '/proc/sys/kernel/arch')) {
    $machine = <$handle> // '';
    chomp $machine;
  } else {
    require Config;
    ($machine) = ($Config::Config{archname} // '') =~ /\A([^-]+)/;
  }
  return 332 if ($machine // '') eq 'x86_64';
  return 291 if ($machine // '') eq 'aarch64';
  return undef;
}

my $AT_FDCWD = -100;
my $AT_EMPTY_PATH = 0x1000;
my $STATX_BASIC_STATS = 0x7ff;

# (inode, size, mtime s, mtime ns) of a path (or of an open file, given its descriptor), or ().
# One buffer for every call: 20,000 calls are the whole of the pre-check's time.
my $statx_buffer = "\0" x 256;
sub statx_of {
  my ($number, $dir, $path, $flags) = @_;
  return () unless syscall($number, $dir, $path, $flags, $STATX_BASIC_STATS, $statx_buffer) == 0;
  return unpack 'x32 Q Q x64 q L', $statx_buffer;
}

# The newest no-op record in the state folder: the one the last run wrote.
sub newest_record {
  my ($number) = @_;
  opendir(my $folder, '.refinery/state') or return undef;
  my ($newest, $newest_time);
  for my $name (readdir $folder) {
    next unless $name =~ /\Anoop-[0-9a-f]{16}\.bin\z/;
    my (undef, undef, $seconds, $nanoseconds) = statx_of($number, $AT_FDCWD, ".refinery/state/$name", 0);
    next unless defined $nanoseconds;
    # Seconds, then nanoseconds: as one double they would round to a quarter of a microsecond.
    ($newest, $newest_time) = ($name, [$seconds, $nanoseconds])
      if !defined $newest_time || $seconds > $newest_time->[0] || ($seconds == $newest_time->[0] && $nanoseconds > $newest_time->[1]);
  }
  closedir $folder;
  return $newest;
}

# The answer for the newest record, or undef when there is none to give.
sub precheck_answer {
  my $number = statx_number() // return undef;
  # A kernel without statx, or a sandbox that refuses it, fails every call: then no answer.
  my @probe = statx_of($number, $AT_FDCWD, '.', 0);
  return undef unless @probe;
  my $name = newest_record($number) // return undef;
  open(my $handle, '<:raw', ".refinery/state/$name") or return undef;
  # The identity of the very bytes read below: Node reads the record through a descriptor too.
  my @identity = statx_of($number, fileno($handle), '', $AT_EMPTY_PATH);
  return undef unless @identity;
  my $bytes = do { local $/; <$handle> } // return undef;
  close $handle;
  # The layout of src/engine/state/noop-record.ts: a header line whose last two fields are these.
  my $magic = "refinery noop 2\n";
  return undef unless substr($bytes, 0, length $magic) eq $magic;
  my $newline = index($bytes, "\n", length $magic);
  return undef if $newline < 0;
  my $header = substr($bytes, length $magic, $newline - length $magic);
  return undef unless $header =~ /,"files":(\d+),"pathBytes":(\d+)\}\z/;
  my ($files, $path_bytes) = ($1, $2);
  my $paths_at = $newline + 1;
  my $numbers_at = ($paths_at + $path_bytes + 7) & ~7;
  return undef unless length($bytes) == $numbers_at + 8 * (1 + 3 * $files);
  return undef unless unpack('d', substr($bytes, $numbers_at, 8)) == 1.5;
  my $paths_end = $paths_at + $path_bytes;
  my $bits = "\0" x (($files + 7) >> 3);
  # Each path and its three numbers taken from the bytes as the loop reaches them, never all
  # unpacked at once: a record of a million files stays a few times its size in memory. The
  # loop of statx_of is written out: a call per file would add a third to the loop's time.
  my $buffer = $statx_buffer;
  my $from = $paths_at;
  for my $i (0 .. $files - 1) {
    # The last path runs to the end of the list and holds no NUL; any other ends at its NUL,
    # inside the list: as many paths as the header says, as Node's split finds them.
    my $last = $i == $files - 1;
    my $end = $last ? $paths_end : index($bytes, "\0", $from);
    return undef if $end < $from || ($end >= $paths_end && !$last);
    my $path = substr($bytes, $from, $end - $from);
    return undef if $last && index($path, "\0") >= 0;
    $from = $end + 1;
    my ($size, $mtime, $inode) = unpack 'd3', substr($bytes, $numbers_at + 8 + 24 * $i, 24);
    # Unsettled: Node checks it by content. A path with `..` Node names lexically, the kernel
    # through links: Node stats those itself.
    my $same = 0;
    if ($size != -2 && index($path, '..') < 0) {
      if (syscall($number, $AT_FDCWD, $path, 0, $STATX_BASIC_STATS, $buffer) == 0) {
        my ($now_inode, $now_size, $seconds, $nanoseconds) = unpack 'x32 Q Q x64 q L', $buffer;
        # Node's own arithmetic for mtimeMs, in the same doubles.
        $same = $now_size == $size && $seconds * 1000 + $nanoseconds / 1e6 == $mtime && $now_inode == $inode;
      } else {
        # Absent (ENOENT, ENOTDIR) is what Node records as missing; any other failure (a loop
        # of links, a refusal) is left to Node's own stat.
        $same = $size == -1 && ($! == 2 || $! == 20);
      }
    }
    vec($bits, $i, 1) = 1 unless $same;
  }
  return undef if $files == 0 && $path_bytes != 0;
  return "refinery precheck 1 $name @identity $files\n$bits";
}

# Starts the pre-check and returns the handle Node reads its answer from (kept open by the
# caller until it starts Node), or undef.
sub start_noop_precheck {
  my $answer;
  {
    # Above $^F, perl marks a new descriptor close-on-exec: the read end must stay open for Node.
    local $^F = 1 << 20;
    pipe($answer, my $writer) or return undef;
    my $child = fork() // return undef;
    if ($child == 0) {
      # Once more, so that Node never finds a child it did not start: the grandchild is init's.
      close $answer;
      my $worker = fork() // CORE::exit(0);
      CORE::exit(0) if $worker != 0;
      # Nothing of the caller's kept open: a `$(refinery run)` waits for the end of its output only.
      open(STDIN, '<', '/dev/null');
      open(STDOUT, '>', '/dev/null');
      open(STDERR, '>', '/dev/null');
      my $text = precheck_answer();
      if (defined $text) {
        binmode $writer;
        while (length $text) {
          my $written = syswrite($writer, $text);
          last unless defined $written && $written > 0;
          substr($text, 0, $written, '');
        }
      }
      CORE::exit(0);
    }
    close $writer;
    waitpid($child, 0);
  }
  return $answer;
}

1;
