// cordon dashboard: a small, safe Markdown reader for vault notes (API-6).
// Output is DOM built with textContent only: raw HTML in a note stays text,
// images are never loaded, and links are inert unless they point inside
// the vault, where they open the note in the Vault view.

import { el } from './dom.js';

const MAX_BLOCKS = 5000;

// A vault-internal target as a vault-relative .md path, or null.
export function vaultTarget(href, base) {
  if (typeof href !== 'string' || href === '' || href.length > 1024) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//') ||
      href.startsWith('/') || href.includes('\\') || href.includes('\0'))
    return null;
  let p = href.split('#')[0].split('?')[0];
  try {
    p = decodeURIComponent(p);
  } catch {
    return null;
  }
  if (!p.endsWith('.md')) p += '.md';
  const dir = base.includes('/') ? base.slice(0, base.lastIndexOf('/')).split('/') : [];
  const out = [];
  for (const s of [...dir, ...p.split('/')]) {
    if (s === '' || s === '.') continue;
    if (s === '..') {
      if (!out.length) return null;
      out.pop();
    } else if (s.startsWith('.')) {
      return null;
    } else {
      out.push(s);
    }
  }
  return out.length ? out.join('/') : null;
}

// Inline spans: `code`, **strong**, *em*/_em_, [text](href), [[wikilink]],
// ![alt](src) (shown as its alt text only).
const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*|\b_[^_\n]+_\b)|(!?\[[^\]\n]*\]\([^)\s]*\))|(\[\[[^\]\n]+\]\])/g;

// CommonMark backslash escapes (cordon writes prompt and agent text in
// notes this way, VA-5): an escaped ASCII punctuation character is only
// that character, so INLINE sees a private-use stand-in for it, and text
// gets the character back.  A note that holds such stand-ins itself is
// read without escapes.
const ESCAPED = /\\([!-/:-@[-`{-~])/g;
const STANDIN = /[\uE021-\uE07E]/;
const STANDINS = /[\uE021-\uE07E]/g;

function inline(parent, rawText, ctx) {
  const esc = !STANDIN.test(rawText);
  const text = esc ? rawText.replace(ESCAPED, (_, c) => String.fromCharCode(0xE000 + c.charCodeAt(0))) : rawText;
  const u = (s) => (esc ? s.replace(STANDINS, (c) => String.fromCharCode(c.charCodeAt(0) - 0xE000)) : s);
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) parent.append(document.createTextNode(u(text.slice(last, m.index))));
    last = m.index + m[0].length;
    const t = m[0];
    if (m[1]) {
      parent.append(el('code', null, u(t.slice(1, -1))));
    } else if (m[2]) {
      parent.append(el('strong', null, u(t.slice(2, -2))));
    } else if (m[3]) {
      parent.append(el('em', null, u(t.slice(1, -1))));
    } else if (m[4]) {
      const img = t.startsWith('!');
      const close = t.lastIndexOf('](');
      const label = u(t.slice(img ? 2 : 1, close));
      const href = u(t.slice(close + 2, -1));
      if (img) parent.append(el('span', 'md-image', `[image: ${label}]`));
      else parent.append(link(label || href, vaultTarget(href, ctx.path), href, ctx));
    } else {
      const inner = u(t.slice(2, -2));
      const [target, alias] = inner.split('|');
      parent.append(link(alias || target, vaultTarget(target.trim(), ''), target, ctx));
    }
  }
  if (last < text.length) parent.append(document.createTextNode(u(text.slice(last))));
}

function link(label, target, raw, ctx) {
  if (target === null) {
    // Inert: shown, never followed (no href, so no navigation).
    const s = el('span', 'md-link-inert', label);
    s.title = 'Link outside the vault (not followed)';
    return s;
  }
  const a = el('a', 'md-link', label);
  a.href = `#vault/${target.split('/').map(encodeURIComponent).join('/')}`;
  a.dataset.note = target;
  return a;
}

// Front matter (--- … ---) at the very top, returned as text.
function frontMatter(lines) {
  if (lines[0] !== '---') return null;
  for (let i = 1; i < lines.length && i < 200; i++)
    if (lines[i] === '---' || lines[i] === '...') return i;
  return null;
}

// Render `text` (a note's content) into a new element.  ctx.path is the
// note's own vault-relative path, for relative links.
export function renderMarkdown(text, ctx) {
  const root = el('div', 'md');
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  let blocks = 0;
  const fm = frontMatter(lines);
  if (fm !== null) {
    root.append(el('pre', 'md-frontmatter', lines.slice(1, fm).join('\n')));
    i = fm + 1;
  }
  while (i < lines.length && blocks++ < MAX_BLOCKS) {
    const line = lines[i];
    if (/^\s*$/.test(line)) {
      i++;
      continue;
    }
    const fence = /^(```|~~~)/.exec(line);
    if (fence) {
      const body = [];
      for (i++; i < lines.length && !lines[i].startsWith(fence[1]); i++) body.push(lines[i]);
      i++;
      root.append(el('pre', 'md-code', body.join('\n')));
      continue;
    }
    const hd = /^(#{1,6})\s+(.*)$/.exec(line);
    if (hd) {
      const e = el(`h${Math.min(hd[1].length + 2, 6)}`, 'md-h');
      inline(e, hd[2], ctx);
      root.append(e);
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      root.append(el('hr'));
      i++;
      continue;
    }
    if (/^>\s?/.test(line)) {
      const q = el('blockquote');
      const body = [];
      for (; i < lines.length && /^>\s?/.test(lines[i]); i++) body.push(lines[i].replace(/^>\s?/, ''));
      inline(q, body.join(' '), ctx);
      root.append(q);
      continue;
    }
    const li = /^\s*([-*+]|\d+[.)])\s+/;
    if (li.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? 'ol' : 'ul');
      for (; i < lines.length && li.test(lines[i]); i++) {
        const item = el('li');
        let t = lines[i].replace(li, '');
        const task = /^\[( |x|X)\]\s+/.exec(t);
        if (task) {
          item.append(el('span', 'md-task', task[1] === ' ' ? '☐ ' : '☑ '));
          t = t.slice(task[0].length);
        }
        inline(item, t, ctx);
        list.append(item);
      }
      root.append(list);
      continue;
    }
    const para = [];
    for (; i < lines.length && !/^\s*$/.test(lines[i]) &&
        !/^(#{1,6}\s|```|~~~|>)/.test(lines[i]) && !li.test(lines[i]); i++)
      para.push(lines[i].replace(/^&#(32|9);/, ' ').trim());
    // A line ending in an odd number of backslashes is a hard break.
    const p = el('p');
    let run = [];
    for (const ln of para) {
      const hard = /(^|[^\\])(\\\\)*\\$/.test(ln);
      run.push(hard ? ln.slice(0, -1) : ln);
      if (hard) {
        inline(p, run.join(' '), ctx);
        p.append(el('br'));
        run = [];
      }
    }
    if (run.length) inline(p, run.join(' '), ctx);
    root.append(p);
  }
  return root;
}
