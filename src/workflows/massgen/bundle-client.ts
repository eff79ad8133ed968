// The script inside a bundle page (plain browser JavaScript, no build step). It builds the page
// from the embedded JSON: every value from the logs is set as text (textContent), never as HTML;
// the report's Markdown goes through marked, then DOMPurify, before it is inserted; its Mermaid
// blocks are rendered by mermaid with securityLevel 'strict'. When everything is drawn it sets
// <body data-ready="true"> (tests wait for it).
export const BUNDLE_CLIENT_JS = String.raw`(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('bundle-data').textContent);
  var app = document.getElementById('app');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function section(id, title) {
    var s = el('section');
    s.id = id;
    s.appendChild(el('h2', null, title));
    app.appendChild(s);
    return s;
  }
  function table(head, rows) {
    if (rows.length === 0) return el('p', 'none', 'None.');
    var t = el('table');
    var tr = el('tr');
    head.forEach(function (h) { tr.appendChild(el('th', null, h)); });
    var thead = el('thead');
    thead.appendChild(tr);
    t.appendChild(thead);
    var body = el('tbody');
    rows.forEach(function (row) {
      var r = el('tr');
      row.forEach(function (cell) { r.appendChild(el('td', null, cell === null || cell === undefined ? '-' : cell)); });
      body.appendChild(r);
    });
    t.appendChild(body);
    return t;
  }
  function at(x) { return x.at === null || x.at === undefined ? (x.time || '-') : x.at.toFixed(1) + ' s'; }

  var head = document.getElementById('summary');
  head.appendChild(el('p', null, 'Question: ' + (data.question || '(none)')));
  head.appendChild(el('p', null, 'State: ' + data.state + '. Winner: ' + (data.winner || 'none') + '. ' + data.answers.length + ' answer text(s), ' + data.votes.length + ' vote(s).'));
  var red = el('p', data.redaction.enabled ? 'redaction' : 'redaction off');
  if (data.redaction.enabled) {
    var parts = Object.keys(data.redaction.counts).map(function (k) { return k + ' ' + data.redaction.counts[k]; });
    red.textContent = 'Redacted before writing: ' + (parts.length ? parts.join(', ') : 'nothing found') + ' (' + data.redaction.total + ' in all).';
  } else {
    red.textContent = 'NOT REDACTED: this bundle was written with --no-redact; it may hold keys, tokens, e-mail addresses and local paths.';
  }
  head.appendChild(red);

  var report = section('report', 'Analysis report');
  var md = el('div', 'markdown');
  md.innerHTML = DOMPurify.sanitize(marked.parse(data.report, { gfm: true }));
  report.appendChild(md);
  var diagrams = [];
  md.querySelectorAll('pre > code.language-mermaid').forEach(function (code) {
    var div = el('div', 'mermaid');
    div.textContent = code.textContent;
    code.parentNode.replaceWith(div);
    diagrams.push(div);
  });

  var answers = section('answers', 'Answers');
  data.answers.forEach(function (a) {
    var box = el('article', a.final ? 'answer final' : 'answer');
    box.appendChild(el('h3', null, a.label + ' by ' + a.agentId + (a.final ? '' : ' (attempt ' + a.attempt + ', ' + a.snapshot + ')')));
    box.appendChild(el('pre', null, a.text + (a.truncated ? '\n[cut: the answer holds ' + a.chars + ' bytes]' : '')));
    answers.appendChild(box);
  });
  if (data.answers.length === 0) answers.appendChild(el('p', 'none', 'No answer text was found.'));

  var votes = section('votes', 'Votes');
  votes.appendChild(table(['When', 'Attempt', 'Voter', 'Voted for', 'Answer', 'Reason', 'Note'], data.votes.map(function (v) {
    return [at(v), v.attempt, v.voterId, v.votedFor, v.votedForLabel, v.reason, [v.superseded ? 'replaced by a later vote' : '', v.stale ? 'for an outdated answer' : ''].filter(Boolean).join('; ')];
  })));
  if (data.ignoredVotes.length) {
    votes.appendChild(el('h3', null, 'Ignored votes'));
    votes.appendChild(table(['When', 'Attempt', 'Agent', 'Details'], data.ignoredVotes.map(function (v) { return [at(v), v.attempt, v.agentId, v.details]; })));
  }

  var timeline = section('timeline', 'Timeline');
  timeline.appendChild(table(['When', 'Attempt', 'Event', 'Agent', 'Details'], data.timeline.map(function (e) { return [at(e), e.attempt, e.type, e.agentId, e.text]; })));

  var config = section('config', 'Config');
  config.appendChild(el('p', null, 'Config file: ' + (data.config.path || 'unknown') + '. MassGen ' + (data.config.massgenVersion || 'version unknown') + '.'));
  config.appendChild(el('pre', null, data.config.text || '(no config in execution_metadata.yaml)'));

  if (data.warnings.length) {
    var warn = section('warnings', 'Warnings');
    var list = el('ul');
    data.warnings.forEach(function (w) { list.appendChild(el('li', null, w)); });
    warn.appendChild(list);
  }

  function ready() { document.body.setAttribute('data-ready', 'true'); }
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: 'neutral' });
  if (diagrams.length === 0) ready();
  else mermaid.run({ nodes: diagrams }).then(ready, function (error) { console.error('mermaid: ' + (error && error.message ? error.message : error)); ready(); });
})();`;
