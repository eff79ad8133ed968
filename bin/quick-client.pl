# refinery's quick client: asks the project's running `refinery watch` to run `refinery run`,
# `plan` or `status`, without starting Node. Node takes ~50 ms to start, as long as make's whole
# no-op over 10,000 targets; perl starts in 2 ms. Build tools with a daemon ship a thin client
# for this reason (nailgun's ng, Bazel's and Buck2's clients). bin/refinery.js, read by /bin/sh,
# starts this file when a watch socket lies in the working folder, and for a `refinery run`
# where the last run left a large no-op record (.refinery/state/precheck). It speaks the protocol of src/cli/daemon/protocol.ts; for everything it
# does not handle (no watch, a flag before the command, --help, another build, a busy or absent
# daemon) it hands the very same arguments to Node, which decides as always; on the way, for a
# `refinery run`, it starts the no-op pre-check (bin/noop-precheck.pl). It loads no module but
# strict (warnings.pm alone would add ~1.3 ms to its ~3 ms start), so that starting it stays cheap.
use strict;

# Left in @ARGV: should loading this file fail, the shell line that started it runs Node on them.
my ($bin, @args) = @ARGV;

my $help = grep { $_ eq '-h' || $_ eq '--help' } @args;
# Runs that never take the no-op shortcut (run.ts): no pre-check to waste a core on.
my $forced = grep { /\A--(?:force|only|shard)(?:=|\z)/ } @args;

# Node runs the command as if this client had never started: same arguments, same environment
# (and for a `refinery run`, the no-op pre-check's answer on its way: bin/noop-precheck.pl).
# One exception, undone by Node before it starts anything: where the last run of a pipeline
# that opens no TLS connection of refinery's own left .refinery/state/lean-start, Node starts
# without NODE_EXTRA_CA_CERTS, which it would spend ~30 ms parsing (src/cli/deferred-ca.ts).
my $precheck;
sub by_node {
  my $run = @args && $args[0] eq 'run' && !$help;
  # The shell also comes here for the lean start alone: a pre-check only where it did before.
  my $wanted = -e '.refinery/state/precheck' || -S '.refinery/watch/sock';
  if (!defined $precheck && $run && $wanted && !$forced && !defined $ENV{REFINERY_NO_PRECHECK}) {
    (my $dir = __FILE__) =~ s{[^/]*\z}{};
    $precheck = do("${dir}noop-precheck.pl") ? start_noop_precheck() : undef;
    # With this process's pid, which Node's will be: see src/cli/precheck-pipe.ts.
    $ENV{REFINERY_PRECHECK_FD} = fileno($precheck) . ":$$" if defined $precheck;
  }
  if ($run && ($ENV{NODE_EXTRA_CA_CERTS} // '') ne '' && !defined $ENV{REFINERY_DEFERRED_CA_CERTS} && -e '.refinery/state/lean-start') {
    $ENV{REFINERY_DEFERRED_CA_CERTS} = delete $ENV{NODE_EXTRA_CA_CERTS};
  }
  exec('node', $bin, @args) or print STDERR "refinery: cannot start node: $!\n";
  exit 127;
}

by_node() if defined $ENV{REFINERY_NO_DAEMON} || defined $ENV{REFINERY_FROM_SOURCE};
by_node() unless @args && $args[0] =~ /\A(?:run|plan|status)\z/ && !$help;
# No watch serving here: the shell started this client for the pre-check alone.
by_node() unless -S '.refinery/watch/sock';

# The package this file belongs to: the bin path may be a chain of links (node_modules/.bin).
sub package_root {
  my $file = $bin;
  for (1 .. 40) {
    last unless -l $file;
    my $link = readlink $file;
    return undef unless defined $link;
    (my $dir = $file) =~ s{[^/]*\z}{};
    $file = $link =~ m{\A/} ? $link : $dir . $link;
  }
  (my $dir = $file) =~ s{[^/]*\z}{};
  $dir = './' if $dir eq '';
  return "$dir..";
}

# Whether dist/ is the build Node would run (bin/refinery.js's own rule): a clone being edited
# runs its sources, and then only Node can tell which build it is.
sub newest_source_mtime {
  my ($dir) = @_;
  my $newest = 0;
  opendir(my $handle, $dir) or return 0;
  for my $name (readdir $handle) {
    next if $name eq '.' || $name eq '..';
    my $path = "$dir/$name";
    if (-d $path && !-l $path) {
      my $inner = newest_source_mtime($path);
      $newest = $inner if $inner > $newest;
    } elsif ($name =~ /\.ts\z/) {
      my $mtime = (stat $path)[9] // 0;
      $newest = $mtime if $mtime > $newest;
    }
  }
  closedir $handle;
  return $newest;
}

sub build_id {
  my $root = package_root() // return undef;
  my $stamp = "$root/dist/.stamp";
  open(my $handle, '<', $stamp) or return undef;
  my $token = do { local $/; <$handle> } // '';
  close $handle;
  return undef unless $token =~ /\A[0-9a-f-]{8,64}\z/;
  unless (defined $ENV{REFINERY_FROM_DIST} || !-e "$root/.git") {
    # Whole seconds here against Node's milliseconds: a source edited within the stamp's own
    # second counts as newer, so such a clone goes to Node, which then decides exactly.
    return undef if newest_source_mtime("$root/src") >= (stat $stamp)[9];
  }
  return "dist:$token";
}

my $build = build_id() // by_node();

# Only a folder of our own, that no one else can enter, may hold the socket we trust.
my @folder = lstat '.refinery/watch';
by_node() unless @folder && -d _ && !-l _ && $folder[4] == $< && ($folder[2] & 077) == 0;

sub json_string {
  my ($text) = @_;
  $text =~ s/(["\\])/\\$1/g;
  $text =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord $1)/ge;
  return qq("$text");
}

sub json_unescape {
  my ($text) = @_;
  my %simple = ('"' => '"', '\\' => '\\', '/' => '/', b => "\b", f => "\f", n => "\n", r => "\r", t => "\t");
  $text =~ s{\\(?:u([0-9a-fA-F]{4})|(.))}{
    if (defined $2) { $simple{$2} // $2 }
    else {
      my $code = hex $1;
      # JSON.stringify writes a pair of surrogates as the character itself; one alone is broken text.
      my $char = ($code >= 0xd800 && $code <= 0xdfff) ? chr(0xfffd) : chr($code);
      utf8::encode($char);
      $char;
    }
  }ge;
  return $text;
}

# The terminal's width as Node reads it (TIOCGWINSZ), for the daemon's live view.
sub columns {
  return undef unless -t STDOUT;
  my $request = $^O eq 'linux' ? 0x5413 : $^O eq 'darwin' ? 0x40087468 : return undef;
  my $size = "\0" x 8;
  return undef unless ioctl(STDOUT, $request, $size);
  my (undef, $cols) = unpack 'S2', $size;
  return $cols > 0 ? $cols : undef;
}

my $socket;
my $address = '.refinery/watch/sock';
if ($^O eq 'linux') {
  # AF_UNIX and SOCK_STREAM are 1 on Linux; packed by hand to spare loading Socket.pm.
  socket($socket, 1, 1, 0) or by_node();
  connect($socket, pack('S', 1) . $address . "\0") or by_node();
} else {
  require Socket;
  socket($socket, Socket::AF_UNIX(), Socket::SOCK_STREAM(), 0) or by_node();
  connect($socket, Socket::pack_sockaddr_un($address)) or by_node();
}

my $workdir = $ENV{PWD};
my @here = stat '.';
my @named = defined $workdir && $workdir =~ m{\A/} ? stat $workdir : ();
$workdir = undef unless @named && $named[0] == $here[0] && $named[1] == $here[1];
unless (defined $workdir) {
  # Without a trustworthy PWD: the real path, found as pwd(1) finds it.
  chomp($workdir = `pwd -P`);
}
my $cols = columns();
my @env = map { defined $ENV{$_} ? (json_string($_) . ':' . json_string($ENV{$_})) : () } qw(CI NO_COLOR);
my $request = '{"type":"request","build":' . json_string($build) . ',"command":' . json_string($args[0])
  . ',"argv":[' . join(',', map { json_string($_) } @args[1 .. $#args]) . ']'
  . ',"workdir":' . json_string($workdir)
  . ',"stdout":{"tty":' . (-t STDOUT ? 'true' : 'false') . (defined $cols ? ",\"columns\":$cols" : '') . '}'
  . ',"env":{' . join(',', @env) . '}}' . "\n";

# Writes everything; false once the reader went away (`refinery status | head -3` ends the output, not the run).
sub write_all {
  my ($stream, $data) = @_;
  while (length $data) {
    my $written = syswrite($stream, $data);
    if (!defined $written) {
      next if $! == 4;    # EINTR
      return 0;
    }
    substr($data, 0, $written, '');
  }
  return 1;
}

$SIG{PIPE} = 'IGNORE';
my $interrupts = 0;
my $interrupt = sub {
  $interrupts += 1;
  exit 130 if $interrupts > 2;
  syswrite($socket, qq({"type":"interrupt"}\n));
};
$SIG{INT} = $interrupt;
$SIG{TERM} = $interrupt;

write_all($socket, $request) or by_node();

my %open = (out => 1, err => 1);
my $accepted = 0;
my $buffered = '';
my $deadline = time + 5;
my $went_away = "refinery: the watch daemon went away during the $args[0]\n";
while (1) {
  my $ready = '';
  vec($ready, fileno($socket), 1) = 1;
  my $wait = $accepted ? undef : $deadline - time;
  by_node() if defined $wait && $wait <= 0;
  my $count = select($ready, undef, undef, $wait);
  # Interrupted by a signal (its handler has run): wait again. Any other failure ends as a lost daemon.
  next if $count < 0 && $! == 4;
  $count = 1 if $count < 0;
  next if $count == 0;
  my $read = sysread($socket, $buffered, 65536, length $buffered);
  next if !defined $read && $! == 4;    # EINTR
  if (!$read) {
    by_node() unless $accepted;
    write_all(\*STDERR, $went_away);
    exit 1;
  }
  while ((my $at = index($buffered, "\n")) >= 0) {
    my $line = substr($buffered, 0, $at + 1, '');
    if ($line =~ /\A\{"type":"(out|err)","data":"((?:[^"\\]|\\.)*)"\}\n\z/s) {
      my $stream = $1 eq 'out' ? \*STDOUT : \*STDERR;
      my $data = json_unescape($2);
      $open{$1} = write_all($stream, $data) if $open{$1};
    } elsif ($line =~ /\A\{"type":"exit","code":(-?\d+)\}\n\z/) {
      exit $1;
    } elsif ($line =~ /\A\{"type":"accepted"\}\n\z/) {
      $accepted = 1;
    } elsif ($line =~ /\A\{"type":"fallback"/) {
      close $socket;
      by_node();
    }
  }
  if (length($buffered) > 1 << 20) {
    by_node() unless $accepted;
    write_all(\*STDERR, $went_away);
    exit 1;
  }
}
