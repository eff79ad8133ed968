import { describe, expect, it } from 'vitest';
import { mdCell, mdCode, mdCodeCell, mdText, mermaidLabel } from '../../../src/security/markdown-escape.ts';

describe('markdown escaping', () => {
  it('mdText - one line; no heading, list, quote, HTML, link, image, emphasis or code can start', () => {
    expect(mdText('a\n# H\r\n> q\u2028- x')).toBe('a \\# H &gt; q - x');
    expect(mdText('<img src=x onerror=alert(1)>')).toBe('&lt;img src=x onerror=alert(1)&gt;');
    expect(mdText('![t](http://x/p.png) [l](javascript:x)')).toBe('!\\[t\\](http://x/p.png) \\[l\\](javascript:x)');
    expect(mdText('*b* `c` ~~s~~ _i_ snake_case a\\b &amp;')).toBe('\\*b\\* \\`c\\` \\~\\~s\\~\\~ \\_i\\_ snake_case a\\\\b &amp;amp;');
    expect(mdText('- item')).toBe('\\- item');
    expect(mdText('12. item')).toBe('12\\. item');
    expect(mdText('=====')).toBe('\\=====');
    expect(mdText('nul\u0000esc\u001b[31m')).toBe('nulesc\\[31m');
  });

  it('mdCell - pipes escaped, line breaks gone, empty shown as -', () => {
    expect(mdCell('a | b\r| c |')).toBe('a \\| b \\| c \\|');
    expect(mdCell('')).toBe('-');
    expect(mdCell(null)).toBe('-');
    expect(mdCell(3)).toBe('3');
    // Cells hold inline content only: a leading number or dash starts no list there.
    expect(mdCell('-0.005')).toBe('-0.005');
    expect(mdCell('10.783 s')).toBe('10.783 s');
  });

  it('mdCode - a fence longer than any backtick run inside, padded when the text starts or ends with one', () => {
    expect(mdCode('ls -la')).toBe('`ls -la`');
    expect(mdCode('echo `id` ```x')).toBe('````echo `id` ```x````');
    expect(mdCode('`tick')).toBe('`` `tick ``');
    expect(mdCode('a\nb')).toBe('`a b`');
    expect(mdCode('')).toBe('` `');
  });

  it('mdCodeCell - a code span whose pipes do not split the table cell', () => {
    expect(mdCodeCell('grep a | wc -l')).toBe('`grep a \\| wc -l`');
  });

  it('mermaidLabel - only letters, digits, spaces and harmless punctuation; never empty; cut to length', () => {
    expect(mermaidLabel('c|d`x```mermaid"]-->n0["<b>pwn</b>"];')).toBe('c d x mermaid -- n0 b pwn /b');
    expect(mermaidLabel('agent_a\n# INJECTED\n```')).toBe('agent_a INJECTED');
    expect(mermaidLabel('vote for agent1.1 (superseded)')).toBe('vote for agent1.1 (superseded)');
    expect(mermaidLabel('Ünïcödé 名前')).toBe('Ünïcödé 名前');
    expect(mermaidLabel('<>;#')).toBe('?');
    expect(mermaidLabel('x'.repeat(100), 10)).toBe('x'.repeat(10));
  });
});
