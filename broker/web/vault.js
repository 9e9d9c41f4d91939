// cordon dashboard: the Vault view (API-6) — the folder tree of the vault,
// inbox first, and a reader that renders a note's Markdown safely (text
// only, links inert unless they point inside the vault).

import { getJSON } from './api.js';
import {
  el, h, fmtBytes, viewHead, panelFor, loadingPanel, errorPanel,
} from './dom.js';
import { renderMarkdown } from './markdown.js';

const INBOX = '00_Inbox';

export function vaultHash(p) {
  return `#vault/${p.split('/').map(encodeURIComponent).join('/')}`;
}

function join(dir, name) {
  return dir ? `${dir}/${name}` : name;
}

// Entries may come as names or as {name} / {path} objects; keep the name.
function entryName(x) {
  if (typeof x === 'string') return x;
  if (x && typeof x === 'object')
    return typeof x.name === 'string' ? x.name : typeof x.path === 'string' ? x.path : null;
  return null;
}

function base(p) {
  return p.includes('/') ? p.slice(p.lastIndexOf('/') + 1) : p;
}

// cordon's chat notes (VA-5) take their "# title" from the prompt's first
// 60 characters, wherever that falls.  Shown here, a title cut short of
// its prompt ends at a word boundary with "…"; the note is not changed.
export function chatTitle(text) {
  const lines = text.split('\n');
  const fm = lines[0] === '---' ? lines.indexOf('---', 1) : -1;
  const t = fm + 2; // "---", "", "# title", "", "## prompt", "", prompt…
  if (fm < 0 || !lines.slice(1, fm).includes('type: chat') ||
    !lines.slice(1, fm).includes('source: cordon') || lines[fm + 1] !== '' ||
    !lines[t]?.startsWith('# ') || lines[t + 1] !== '' || lines[t + 2] !== '## prompt' ||
    lines[t + 3] !== '')
    return text;
  const title = lines[t].slice(2);
  const rest = lines.slice(t + 4).join('\n');
  const end = rest.indexOf('\n\n## response\n');
  const prompt = (end < 0 ? rest : rest.slice(0, end)).replace(/[\n\t]/g, ' ').trim();
  if (title === '' || prompt.length <= title.length || !prompt.startsWith(title)) return text;
  let cut = title;
  const sp = title.lastIndexOf(' ');
  if (prompt[title.length] !== ' ' && sp > 0) cut = title.slice(0, sp); // mid-word
  lines[t] = `# ${cut.trimEnd()}…`;
  return lines.join('\n');
}

function okName(n) {
  return typeof n === 'string' && n !== '' && !n.startsWith('.') &&
    !n.includes('\\') && !n.split('/').includes('..');
}

export const vaultView = {
  title: 'Vault',
  mount(root, param) {
    this.gen = (this.gen || 0) + 1;
    this.ctrl = new AbortController();
    this.tree = el('nav', 'tree');
    this.tree.setAttribute('aria-label', 'Vault folders');
    this.reader = el('article', 'reader');
    this.reader.append(el('p', 'muted', 'Choose a note to read it.'));
    this.body = h('div', 'vault-grid', this.tree, this.reader);
    root.replaceChildren(viewHead('Vault'), this.body);
    this.root = root;
    this.loadRoot(this.gen, param);
  },

  async loadRoot(gen, param) {
    this.tree.replaceChildren(loadingPanel());
    const res = await this.list('');
    if (gen !== this.gen || res.kind === 'aborted') return;
    if (res.kind !== 'ok') {
      // Nothing to browse: the whole view says so, in the one calm panel.
      this.root.dataset.state = res.kind;
      this.body.replaceChildren(panelFor(res, 'The vault'));
      return;
    }
    this.root.dataset.state = 'ok';
    const ul = this.branch('', res.data);
    this.tree.replaceChildren(ul);
    const inbox = ul.querySelector(`:scope > li.folder[data-dir="${INBOX}"]`);
    if (inbox) await this.toggle(inbox, gen);
    if (param) this.update(param);
  },

  list(dir) {
    const q = dir ? `?dir=${encodeURIComponent(dir)}` : '';
    return getJSON(`/api/vault/notes${q}`, this.ctrl.signal);
  },

  branch(dir, data) {
    const ul = el('ul', 'tree-list');
    const folders = (Array.isArray(data.folders) ? data.folders : []).map(entryName)
      .filter(okName).map(base).sort();
    const notes = (Array.isArray(data.notes) ? data.notes : []).map(entryName)
      .filter(okName).map(base).sort();
    for (const f of folders) {
      const li = el('li', 'folder');
      li.dataset.dir = join(dir, f);
      const b = el('button', 'folder-btn', f);
      b.type = 'button';
      b.setAttribute('aria-expanded', 'false');
      b.addEventListener('click', () => this.toggle(li, this.gen));
      li.append(b);
      ul.append(li);
    }
    for (const n of notes) {
      const p = join(dir, n);
      const a = el('a', 'note-link', n.replace(/\.md$/, ''));
      a.href = vaultHash(p);
      a.dataset.note = p;
      ul.append(h('li', 'note', a));
    }
    if (!ul.childElementCount) ul.append(el('li', 'muted', '(empty)'));
    return ul;
  },

  async toggle(li, gen) {
    const b = li.querySelector(':scope > .folder-btn');
    const sub = li.querySelector(':scope > ul, :scope > .panel');
    if (sub) {
      sub.remove();
      b.setAttribute('aria-expanded', 'false');
      return;
    }
    b.setAttribute('aria-expanded', 'true');
    const res = await this.list(li.dataset.dir);
    if (gen !== this.gen || res.kind === 'aborted') return;
    li.querySelector(':scope > ul, :scope > .panel')?.remove();
    li.append(res.kind === 'ok' ? this.branch(li.dataset.dir, res.data) : panelFor(res, 'This folder'));
  },

  // A note named in the hash: open its folders, then read it.
  async update(param) {
    if (!param) return;
    const gen = this.gen;
    for (const a of this.tree.querySelectorAll('a[aria-current]')) a.removeAttribute('aria-current');
    const parts = param.split('/');
    for (let i = 1; i < parts.length; i++) {
      const d = parts.slice(0, i).join('/');
      const li = [...this.tree.querySelectorAll('li.folder')].find((x) => x.dataset.dir === d);
      if (li && li.querySelector(':scope > .folder-btn').getAttribute('aria-expanded') !== 'true')
        await this.toggle(li, gen);
      if (gen !== this.gen) return;
    }
    const cur = [...this.tree.querySelectorAll('a.note-link')].find((a) => a.dataset.note === param);
    if (cur) cur.setAttribute('aria-current', 'page');
    this.read(param, gen);
  },

  async read(path, gen) {
    this.reader.replaceChildren(loadingPanel());
    if (!okName(path) || !path.endsWith('.md')) {
      this.reader.replaceChildren(errorPanel('Only .md notes inside the vault can be read.'));
      return;
    }
    const res = await getJSON(`/api/vault/note?path=${encodeURIComponent(path)}`, this.ctrl.signal);
    if (gen !== this.gen || res.kind === 'aborted') return;
    this.reader.dataset.note = path;
    if (res.kind !== 'ok' || typeof res.data.content !== 'string') {
      const p = res.kind === 'refused' && res.status === 404 ?
        errorPanel('There is no such note in the vault.') : panelFor(res, 'Reading notes');
      this.reader.replaceChildren(p);
      this.reader.dataset.state = res.kind;
      return;
    }
    const d = res.data;
    const shown = typeof d.path === 'string' ? d.path : path;
    this.reader.dataset.state = 'ok';
    this.reader.replaceChildren(
      h('header', 'reader-head', el('code', 'reader-path', shown),
        Number.isFinite(d.bytes) ? el('span', 'meta', fmtBytes(d.bytes)) : null),
      renderMarkdown(chatTitle(d.content), { path: shown }));
  },

  unmount() {
    this.gen++;
    this.ctrl?.abort();
  },
};
