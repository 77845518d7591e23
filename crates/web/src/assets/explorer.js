// The proof explorer: the checked certificates of the server's certificate directory,
// walked move by move from their root. Each step is a page address (`#/proofs/walk?root=…
// &line=…`), so Back and Forward walk the line and a step can be linked.
'use strict';

const proofs = { last: null };

function proofLink(root, line) {
  return '#/proofs/walk?' + new URLSearchParams({ root, line: line.join(' ') });
}

async function showProofs() {
  const main = document.getElementById('main');
  // Shown again while a check goes on: the look-up form stays as it is, typing and all.
  const kept = document.getElementById('proof-find');
  if (!kept) main.replaceChildren(el('p', { class: 'note' }, 'reading the certificates…'));
  const p = await api('GET', '/api/proofs');
  const list = el('div', { id: 'proof-roots' });
  if (!p.roots.length) list.append(el('p', { class: 'note' }, 'No checked certificate in the server\'s certificate directory (`fanorona serve --certificates DIR`).'));
  for (const r of p.roots) {
    const name = r.reached_by ? `${r.board}, ${r.reached_by}` : r.board;
    list.append(el('div', { class: 'proof-root' },
      el('h3', {}, el('a', { href: proofLink(r.root, []), 'data-root': r.root }, name)),
      el('div', { class: 'note position-text' }, r.root),
      el('ul', {}, r.certificates.map(c => el('li', {}, `${c.file}: ${c.claim}`,
        el('span', { class: 'note' }, ` (${(c.bytes / 1e6).toFixed(1)} MB, checked in ${c.check_seconds.toFixed(1)} s)`))))));
  }
  const refused = p.refused.length ? el('div', { id: 'proof-refused' },
    el('h3', {}, 'Refused by the checker'),
    el('ul', {}, p.refused.map(r => el('li', { class: 'refused' },
      el('strong', {}, r.file), ': ', r.why, el('br'), el('span', { class: 'note' }, 'to mend: ' + r.mend))))) : null;
  // The check under way (from the server's start): said, and the list asked for again.
  const checking = p.checking ? el('p', { class: 'status', id: 'proof-checking' }, checkingWords(p.checking)) : null;
  // A position looked up in every certificate: the walk to it, or why not.
  // The form of the last showing, if there was one: what was typed in it stays.
  const lookup = kept || el('form', { id: 'proof-find', onsubmit: async e => {
    e.preventDefault();
    const said = document.getElementById('proof-find-result');
    const position = document.getElementById('proof-find-position').value.trim();
    if (!position) return;
    said.textContent = 'looking through the certificates (a few seconds for the largest)…';
    try {
      const f = await api('GET', '/api/proofs/find?' + new URLSearchParams({ position }));
      location.hash = proofLink(f.root, f.line);
    } catch (err) { said.textContent = err.message; }
  } },
    el('input', { type: 'text', id: 'proof-find-position', class: 'move-entry', placeholder: 'a position to look up in the certificates', 'aria-label': 'a position to look up in the certificates' }),
    el('button', { type: 'submit' }, 'Look up'),
    el('span', { class: 'note', id: 'proof-find-result' }));
  main.replaceChildren(el('h2', {}, 'Proofs'),
    el('p', { class: 'note' }, 'Each certificate here passed the checker (rules and tables). Open a root to walk its proof move by move, or look a position up.'),
    ...[checking, lookup, list, refused].filter(x => x));
  if (p.checking) again(1000);
}

// The check of the certificate directory under way, in words.
function checkingWords(c) {
  return `Checking the certificates: ${c.done} of ${c.total} done; now ${c.file} (${(c.bytes / 1e6).toFixed(1)} MB), ${c.seconds.toFixed(0)} s so far. This page asks again every second.`;
}

// The page shown again after `ms`, unless the page moved on meanwhile (each showing of a
// page is a generation: one chain of these at most).
function again(ms) {
  const gen = generation;
  setTimeout(() => { if (gen === generation) route(); }, ms);
}

async function showProofWalk(query) {
  const q = new URLSearchParams(query);
  const root = q.get('root') || '';
  const line = (q.get('line') || '').split(/[\s,]+/).filter(x => x);
  const gen = generation;
  const main = document.getElementById('main');
  if (!proofs.last || proofs.last.root !== root) {
    main.replaceChildren(el('p', { class: 'note', id: 'proof-loading' }, 'indexing the certificates (a large one takes a second or two)…'));
  }
  let w;
  try {
    w = await api('GET', '/api/proofs/walk?' + new URLSearchParams({ root, line: line.join(' ') }));
  } catch (e) {
    // Its certificates are still being checked: said, and asked again in a second.
    if (e.status !== 503) throw e;
    if (gen !== generation) return;
    main.replaceChildren(el('p', { class: 'status', id: 'proof-checking' }, e.message));
    again(1000);
    return;
  }
  if (gen !== generation) return;
  proofs.last = w;
  renderWalk(w);
}

function renderWalk(w) {
  const main = document.getElementById('main');
  const crumbs = [el('a', { href: proofLink(w.root, []), 'data-depth': 0 }, 'root')];
  w.line.forEach((m, i) => crumbs.push(' › ', el('a', { href: proofLink(w.root, w.line.slice(0, i + 1)), 'data-depth': i + 1 }, m)));
  const certs = el('ul', { id: 'proof-certificates' }, w.certificates.map(c => el('li', {},
    el('strong', {}, c.file), `: ${c.claim}; `,
    c.reached ? `here ${fmtNumber(c.here)} of its ${fmtNumber(c.nodes)} nodes` : `leaves this line after move ${c.followed}`, ' ',
    el('button', { class: 'small', onclick: () => download('/api/proofs/file?' + new URLSearchParams({ name: c.file }), c.file).catch(e => { document.getElementById('error').textContent = e.message; }) }, 'download'))));
  const body = el('tbody', {});
  for (const m of w.moves) {
    const go = () => { location.hash = proofLink(w.root, [...w.line, m.move]); };
    const why = el('td', { class: 'why' });
    for (const b of m.by) {
      // Which certificate says it: two of one root may end a line differently.
      why.append(el('div', {}, el('span', { class: 'note cert-name' }, b.file.replace(/\.cert(\.gz)?$/, '') + ': '), b.why, ' ',
        b.shared ? el('a', { href: proofLink(w.root, b.shared), class: 'shared' }, 'go there') : null));
    }
    if (!m.by.length) why.append(el('span', { class: 'note' }, 'not in the certificates'));
    const preview = on => () => drawWalkBoard(w, on ? m.move : null);
    body.append(rowKeys(el('tr', {
      class: 'clickable', 'data-move': m.move, onclick: go,
      onmouseenter: preview(true), onmouseleave: preview(false), onfocus: preview(true), onblur: preview(false),
    },
      el('td', { class: 'mv' }, m.move),
      el('td', { class: 'value ' + valueClass(m.value) }, m.value || '-'),
      el('td', { class: 'num' }, m.by.length ? fmtNumber(Math.max(...m.by.map(b => b.nodes))) : ''),
      why)));
  }
  if (!w.moves.length) body.append(el('tr', {}, el('td', { colspan: 4 }, w.end || 'no legal move')));
  const value = w.value ? `${w.side} to move: ${w.value}` : `${w.side} to move: the certificates say nothing of this position`;
  main.replaceChildren(
    el('h2', {}, 'Proof explorer'),
    el('div', { class: 'columns' },
      el('div', { class: 'panel' },
        el('div', { id: 'proof-line', class: 'crumbs' }, crumbs),
        el('div', { id: 'proof-board' }),
        el('button', { id: 'proof-flip', title: 'the board seen from the other side', onclick: () => { boardView.flipped = !boardView.flipped; drawWalkBoard(w, null); } }, 'Flip'),
        el('div', { class: 'status ' + valueClass(w.value), id: 'proof-value' }, value),
        el('div', { class: 'error', id: 'error' }, w.error || ''),
        el('div', { class: 'note position-text', id: 'proof-position' }, w.position),
        el('p', {},
          el('a', { id: 'proof-analyse', href: '#/analyse?' + new URLSearchParams({ position: w.root, line: w.line.join(',') }) }, 'Analyse this line'),
          ' · ',
          el('a', { id: 'proof-play', href: '#/play', onclick: e => { e.preventDefault(); playFrom(w.position); } }, 'Play from here'))),
      el('div', { class: 'panel controls' },
        el('h3', {}, 'Moves, best first for the side to move'),
        el('p', { class: 'note' }, 'value: what the certificates prove for the side that plays the move; nodes: the size of the proof below it; ← and → walk the line.'),
        el('table', { id: 'proof-moves' },
          el('thead', {}, el('tr', {}, ['move', 'value', 'nodes', 'why'].map(h => el('th', {}, h)))),
          body),
        el('h3', {}, 'Certificates'),
        certs)));
  drawWalkBoard(w, null);
}

// The walk's board; with `move`, that move previewed: its path drawn, its captures faint.
function drawWalkBoard(w, move) {
  const holder = document.getElementById('proof-board');
  if (!holder) return;
  const marks = new Map();
  const shown = move && w.steps.find(s => s.notation === move);
  const path = shown ? markPreview(shown, marks) : markLast(w.last, marks);
  holder.replaceChildren(drawBoard(w.board, w.cells.split(''), marks, null, null, path));
}

// ← back one move, → on along the first move listed (the best): only on the explorer.
window.addEventListener('keydown', e => {
  const w = proofs.last;
  if (!w || !location.hash.startsWith('#/proofs/walk')) return;
  if (e.target instanceof Element && e.target.closest('input, textarea, select')) return;
  if (e.key === 'ArrowLeft' && w.line.length) location.hash = proofLink(w.root, w.line.slice(0, -1));
  else if (e.key === 'ArrowRight' && w.moves.length) location.hash = proofLink(w.root, [...w.line, w.moves[0].move]);
  else return;
  e.preventDefault();
});
