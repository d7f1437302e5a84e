import { describe, expect, it } from 'vitest';
import { decodeEntities, sanitizeAnswer, visibleLength } from '../../src/providers/stackexchange/sanitize.js';

describe('Stack Exchange answer sanitising', () => {
  it('drops scripts and styles with their content', () => {
    expect(sanitizeAnswer('<p>Hi<script>alert(1)</script></p><style>p{color:red}</style>')).toBe('<p>Hi</p>');
  });

  it('removes event attributes and every other attribute', () => {
    expect(sanitizeAnswer('<p onclick="x()" class="c" style="color:red">text</p>')).toBe('<p>text</p>');
    expect(sanitizeAnswer('<code onmouseover="steal()">x</code>')).toBe('<code>x</code>');
  });

  it('keeps only absolute http(s) links, opened safely', () => {
    expect(sanitizeAnswer('<a href="https://example.com/a?b=1&amp;c=2" onclick="x()">ok</a>')).toBe(
      '<a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer nofollow">ok</a>',
    );
    expect(sanitizeAnswer('<a href="javascript:alert(1)">bad</a>')).toBe('<a>bad</a>');
    expect(sanitizeAnswer('<a href="JaVaScRiPt:alert(1)">bad</a>')).toBe('<a>bad</a>');
    expect(sanitizeAnswer('<a href="java&#x09;script:alert(1)">bad</a>')).toBe('<a>bad</a>');
    expect(sanitizeAnswer('<a href="/questions/1">rel</a>')).toBe('<a>rel</a>');
    expect(sanitizeAnswer('<a href="//evil.example/">pr</a>')).toBe('<a>pr</a>');
    expect(sanitizeAnswer('<a href="data:text/html,x">d</a>')).toBe('<a>d</a>');
  });

  it('keeps the formatting allowlist and the text of other tags', () => {
    const html =
      '<h2>Title</h2><p>Use <code>x &lt; y</code> and <strong>b</strong> <em>i</em><br>next</p>' +
      '<pre><code>for i in range(3):\n    print(i)</code></pre><ul><li>one</li></ul><ol><li>two</li></ol>' +
      '<blockquote>q</blockquote><hr>';
    expect(sanitizeAnswer(html)).toBe(
      '<h2>Title</h2><p>Use <code>x &lt; y</code> and <strong>b</strong> <em>i</em><br />next</p>' +
        '<pre><code>for i in range(3):\n    print(i)</code></pre><ul><li>one</li></ul><ol><li>two</li></ol>' +
        '<blockquote>q</blockquote><hr />',
    );
    expect(sanitizeAnswer('<div><img src="https://x/y.png" onerror="x()"><span>kept</span></div>')).toBe('kept');
    expect(sanitizeAnswer('<iframe src="https://evil.example"></iframe><p>after</p>')).toBe('<p>after</p>');
  });

  it('decodes entities and counts visible characters', () => {
    expect(decodeEntities('How to cancel a task &quot;cleanly&quot;? &#39;x&#39; &amp; &#x41; &unknown;')).toBe(
      'How to cancel a task "cleanly"? \'x\' & A &unknown;',
    );
    expect(visibleLength('<p>a &lt; b</p>')).toBe(5);
  });
});
