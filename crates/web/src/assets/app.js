// The Fanorona web app: play, analysis and solve sessions. The server knows the rules; the
// page only walks the legal moves it is given, step by step.
'use strict';

// The token every API request carries: taken from the link `fanorona serve` printed, then
// out of the address bar (so it stays out of the history and of a shared screenshot), and
// kept in this origin's storage. Not a cookie: a cookie for 127.0.0.1 goes to every port of
// it, another user's server too; storage is the origin's, port and all.
const TOKEN = (() => {
  const url = new URL(location.href);
  const given = url.searchParams.get('token');
  let kept = null;
  try {
    if (given) localStorage.setItem('fanorona-token', given);
    kept = localStorage.getItem('fanorona-token');
  } catch (_) { /* storage refused: the token lives as long as the page */ }
  if (given) {
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  }
  return given || kept;
})();

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (TOKEN) opts.headers['x-token'] = TOKEN;
  if (body !== undefined) {
    opts.headers['content-type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  let data;
  try { data = await r.json(); } catch (_) { data = { error: r.status + ' ' + r.statusText }; }
  if (!r.ok) {
    const e = new Error(data.error || r.statusText);
    e.status = r.status;
    throw e;
  }
  return data;
}

// A file of the API saved as `name`: fetched with the token (a plain link would need it in
// its address).
async function download(path, name) {
  const r = await fetch(path, { headers: TOKEN ? { 'x-token': TOKEN } : {} });
  if (!r.ok) {
    let data;
    try { data = await r.json(); } catch (_) { data = { error: r.status + ' ' + r.statusText }; }
    throw new Error(data.error || r.statusText);
  }
  const a = el('a', { href: URL.createObjectURL(await r.blob()), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}

// --- small DOM helpers -------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const SVG = 'http://www.w3.org/2000/svg';
function sv(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function valueClass(v) {
  if (v === 'win') return 'v-win';
  if (v === 'loss') return 'v-loss';
  if (v === 'draw' || v === 'at least a draw' || v === 'at most a draw') return 'v-draw';
  return 'v-unknown';
}

function fmtNumber(n) {
  if (n === null || n === undefined) return '-';
  if (typeof n === 'string') return n;
  return n.toLocaleString('en-US');
}

function fmtRate(r) {
  if (!r) return '-';
  if (r >= 1e6) return (r / 1e6).toFixed(2) + ' M/s';
  if (r >= 1e3) return (r / 1e3).toFixed(1) + ' k/s';
  return r.toFixed(0) + '/s';
}

// Timers of the page shown; cleared when another page is shown.
let timers = [];
function every(ms, f) { timers.push(setInterval(f, ms)); }
// Bumped on every page change and new game: late answers of an older one are dropped.
let generation = 0;

// --- the board ---------------------------------------------------------------------------

const GAP = 64, MARGIN = 40;

// What a mark says to a screen reader.
const MARK_WORDS = { movable: 'can move', selected: 'selected', target: 'can go here', trail: 'passed', taken: 'taken', moving: 'moving', last: 'last move ended here', captured: 'taken by the last move' };

// Draws `board` with the pieces `cells` into a new SVG. `marks` maps a point index to
// classes: movable, selected, target, trail, taken, moving, last. `onPoint` gets clicks,
// and Enter or Space on a focused point (each point is in the tab order, named for a
// screen reader). `caption` (the side to move, say) begins the board's own label. `lastMove`
// ({ points, taken, color }) draws the last move's path and the pieces it took (marked
// `captured` in `marks`), faint where they stood.
// How boards are drawn: flipped or not (the Flip buttons).
const boardView = { flipped: false };

function drawBoard(board, cells, marks, onPoint, caption, lastMove) {
  const w = MARGIN * 2 + GAP * (board.cols - 1), h = MARGIN * 2 + GAP * (board.rows - 1);
  const on = c => board.points.filter(p => cells[p.index] === c).map(p => p.name).join(' ') || 'none';
  const label = `${caption ? caption + '. ' : ''}${board.name} board. White: ${on('W')}. Black: ${on('B')}.`;
  const svg = sv('svg', { class: 'board', viewBox: `0 0 ${w} ${h}`, width: w, height: h, id: 'board', role: 'group', 'aria-label': label });
  // Flipped: seen from the other side (Black's first row at the bottom).
  const col = c => boardView.flipped ? board.cols - 1 - c : c;
  const row = r => boardView.flipped ? board.rows - 1 - r : r;
  const xy = p => [MARGIN + col(p.col) * GAP, MARGIN + (board.rows - 1 - row(p.row)) * GAP];
  for (const [a, b] of board.lines) {
    const [x1, y1] = xy(board.points[a]), [x2, y2] = xy(board.points[b]);
    svg.append(sv('line', { class: 'edge', x1, y1, x2, y2 }));
  }
  if (lastMove && lastMove.points.length > 1) {
    const pts = lastMove.points.map(i => xy(board.points[i]).join(',')).join(' ');
    svg.append(sv('polyline', { class: 'last-path', points: pts, 'data-points': lastMove.points.map(i => board.points[i].name).join(' ') }));
  }
  for (let c = 0; c < board.cols; c++) {
    const t = sv('text', { class: 'coord', x: MARGIN + col(c) * GAP - 4, y: h - 8 });
    t.textContent = String.fromCharCode(97 + c);
    svg.append(t);
  }
  for (let r = 0; r < board.rows; r++) {
    const t = sv('text', { class: 'coord', x: 6, y: MARGIN + (board.rows - 1 - row(r)) * GAP + 4 });
    t.textContent = String(r + 1);
    svg.append(t);
  }
  for (const p of board.points) {
    const [x, y] = xy(p);
    const m = marks.get(p.index) || [];
    const c = cells[p.index];
    const what = c === 'W' ? 'white piece' : c === 'B' ? 'black piece' : 'empty';
    const g = sv('g', {
      class: 'pt ' + m.join(' '), 'data-point': p.name, 'data-index': p.index, tabindex: 0,
      role: onPoint ? 'button' : 'img', 'aria-label': [p.name, what, ...m.map(x => MARK_WORDS[x] || x)].join(', '),
    });
    g.append(sv('circle', { class: 'hit', cx: x, cy: y, r: GAP / 2 - 2 }));
    if (m.includes('captured') && lastMove && c === '.') {
      g.append(sv('circle', { class: 'ghost ' + lastMove.color, cx: x, cy: y, r: 19 }));
      g.append(sv('path', { class: 'ghost-x', d: `M${x - 9},${y - 9}L${x + 9},${y + 9}M${x - 9},${y + 9}L${x + 9},${y - 9}` }));
    }
    if (c === 'W' || c === 'B') {
      const cls = ['piece', c];
      if (m.includes('taken')) cls.push('taken');
      if (m.includes('moving')) cls.push('moving');
      g.append(sv('circle', { class: cls.join(' '), cx: x, cy: y, r: 19 }));
    }
    if (m.includes('movable')) g.append(sv('circle', { class: 'ring movable', cx: x, cy: y, r: 24 }));
    if (m.includes('selected')) g.append(sv('circle', { class: 'ring selected', cx: x, cy: y, r: 24 }));
    if (m.includes('last')) g.append(sv('circle', { class: 'ring last', cx: x, cy: y, r: 26 }));
    if (m.includes('target')) g.append(sv('circle', { class: 'dot target', cx: x, cy: y, r: 9 }));
    if (m.includes('trail')) g.append(sv('circle', { class: 'dot trail', cx: x, cy: y, r: 7 }));
    if (onPoint) {
      g.addEventListener('click', () => onPoint(p.index));
      g.addEventListener('keydown', e => {
        if (e.key !== 'Enter' && e.key !== ' ') return;
        e.preventDefault();
        onPoint(p.index);
      });
    }
    svg.append(g);
  }
  return svg;
}

// Puts `svg` in `holder` in place of the board there; a point that had the focus has it
// again (the board is redrawn after each step: a keyboard user stays where they were).
function showBoard(holder, svg) {
  const focused = document.activeElement;
  const at = focused && holder.contains(focused) && focused.getAttribute('data-point');
  holder.replaceChildren(svg);
  if (at) {
    const again = svg.querySelector(`g.pt[data-point="${at}"]`);
    if (again) again.focus();
  }
}

// A move as typed, in the notation's spelling: files lower case, A and W upper case.
function normalMove(t) {
  return t.trim().split('-').map(x => {
    const m = /^([a-z])(\d+)([aw]?)$/i.exec(x.trim());
    return m ? m[1].toLowerCase() + m[2] + m[3].toUpperCase() : x.trim();
  }).join('-');
}

// The move of `moves` (each with its `notation`) a person typed: as written, or without
// its capture marks where only one move reads so ("f2-e3" for f2-e3A).
function typedMove(moves, typed) {
  const t = normalMove(typed);
  const exact = moves.find(x => x.notation === t);
  if (exact || /[AW]/.test(t)) return exact;
  const unmarked = moves.filter(x => x.notation.replace(/[AW]/g, '') === t);
  return unmarked.length === 1 ? unmarked[0] : undefined;
}

// A row of a table the keyboard can reach and take with Enter, as a click.
function rowKeys(tr) {
  tr.setAttribute('tabindex', '0');
  tr.addEventListener('keydown', e => {
    if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); tr.click(); }
  });
  return tr;
}

function mark(marks, p, cls) {
  if (!marks.has(p)) marks.set(p, []);
  marks.get(p).push(cls);
}

// --- move entry: a piece, then each step, with a choice where a step can approach or
// withdraw, and a stop wherever the chain may end ------------------------------------------

// The legal moves that begin with the steps chosen so far.
function candidates(moves, sel) {
  return moves.filter(m => m.from === sel.from &&
    sel.steps.every((s, i) => m.path.length > i && m.path[i] === s.to && m.kinds[i] === s.kind));
}

// The cells and marks of the board while a move is being entered.
function entryView(state, sel) {
  const cells = state.cells.split('');
  const marks = new Map();
  const moves = state.moves;
  if (!sel) {
    for (const f of new Set(moves.map(m => m.from))) mark(marks, f, 'movable');
    return { cells, marks };
  }
  const cands = candidates(moves, sel);
  const k = sel.steps.length;
  let at = sel.from;
  if (k > 0) {
    const m = cands[0];
    const piece = cells[sel.from];
    cells[sel.from] = '.';
    for (let i = 0; i < k; i++) {
      mark(marks, at, 'trail');
      for (const c of m.captures[i]) mark(marks, c, 'taken');
      at = m.path[i];
    }
    cells[at] = piece;
    mark(marks, at, 'moving');
  }
  mark(marks, at, 'selected');
  for (const m of cands) if (m.path.length > k) mark(marks, m.path[k], 'target');
  return { cells, marks };
}

// --- Play ---------------------------------------------------------------------------------

let INFO = null;
async function info() {
  if (!INFO) INFO = await api('GET', '/api/info');
  return INFO;
}

function playerOptions(selected) {
  const opts = [el('option', { value: 'human', selected: selected === 'human' }, 'human')];
  for (const p of INFO.players) {
    // A searcher's perfect level is the perfect player, listed once as `perfect` (unless a
    // game already names it so).
    const levels = p.levels.filter(l => l !== 'perfect' || selected === p.kind + ':' + l);
    const names = p.levels.length ? levels.map(l => p.kind + ':' + l) : [p.kind];
    for (const n of names) opts.push(el('option', { value: n, selected: selected === n }, n));
  }
  return opts;
}

const play = { start: '5x9', moves: [], resigned: false, white: 'human', black: 'alphabeta:medium', state: null, sel: null, thinking: false, error: '', note: '', choice: null };

async function showPlay() {
  await info();
  const main = document.getElementById('main');
  // The menus show the game on the board (a typed start included), so "New game" starts it
  // again unless they are changed.
  const current = play.state ? play.state.board.name : play.start;
  const boardSel = el('select', { id: 'play-board' },
    INFO.boards.map(b => el('option', { value: b.name, selected: b.name === current }, b.name)));
  const whiteSel = el('select', { id: 'play-white' }, playerOptions(play.white));
  const blackSel = el('select', { id: 'play-black' }, playerOptions(play.black));
  const startInput = el('input', { type: 'text', id: 'play-start', placeholder: 'or a position to start from (rows from the top, then w or b)' });
  if (play.start.includes('/')) startInput.value = play.start;
  // A board chosen in the menu is what the next game starts from: a typed start goes.
  boardSel.addEventListener('change', () => { startInput.value = ''; });
  const newGame = () => {
    // The game on the board stays, playable, until the server takes the new one: as the
    // server last took it (a move still on its way when the button was pressed is not).
    const before = play.accepted;
    play.start = startInput.value.trim() || boardSel.value;
    play.white = whiteSel.value;
    play.black = blackSel.value;
    play.moves = [];
    play.resigned = false;
    play.sel = null;
    play.note = '';
    refreshGame().then(ok => {
      // A typed start names its board: the menu shows it.
      if (ok) { boardSel.value = play.state.board.name; return; }
      // Unanswered (Retry then starts the new game) or overtaken: nothing to put back.
      if (ok !== false || play.retry || !before) return;
      const error = play.error;
      Object.assign(play, before, { moves: [...before.moves] });
      play.error = error;
      renderGame();
      const who = playerToMove();
      if (play.state && !play.state.end && who && who !== 'human') agentMove(generation, who);
    });
  };
  main.replaceChildren(el('div', { class: 'columns' },
    el('div', { class: 'panel' },
      el('input', {
        type: 'text', id: 'play-move', class: 'move-entry', autocomplete: 'off', spellcheck: 'false',
        placeholder: 'type a move (d2-e3A, b4-b3A-a3W), then Enter', 'aria-label': 'type a move in notation, then Enter',
        onkeydown: e => { if (e.key === 'Enter') { e.preventDefault(); typedPlayMove(e.target); } },
      }),
      el('div', { id: 'board-holder' }),
      el('div', { class: 'status', id: 'status', role: 'status', 'aria-live': 'polite' }),
      el('div', { id: 'choice-holder' }),
      el('div', {},
        el('button', { id: 'stop-chain', disabled: true, onclick: () => stopChain() }, 'Stop here'),
        el('button', { id: 'cancel-move', onclick: () => { play.sel = null; play.choice = null; renderGame(); } }, 'Cancel move'),
        el('button', { id: 'undo', onclick: () => undo() }, 'Undo'),
        el('button', { id: 'resign-hint', onclick: () => hint() }, 'Hint'),
        el('button', { id: 'resign', onclick: () => resign() }, 'Resign')),
      el('div', { class: 'error', id: 'error' }),
      el('div', { class: 'note', id: 'note' })),
    el('div', { class: 'panel controls' },
      el('h3', {}, 'New game'),
      el('label', {}, 'Board ', boardSel),
      el('label', {}, 'White ', whiteSel),
      el('label', {}, 'Black ', blackSel),
      startInput,
      el('div', {}, el('button', { id: 'new-game', onclick: newGame }, 'New game')),
      el('h3', {}, 'Moves'),
      el('ol', { class: 'history', id: 'history' }),
      el('h3', {}, 'Position'),
      el('input', { type: 'text', id: 'position', readonly: true }),
      el('div', {},
        el('button', { id: 'copy-position', onclick: () => copyText(document.getElementById('position').value) }, 'Copy position'),
        el('button', { id: 'analyse-position', onclick: analyseGame }, 'Analyse it'),
        el('button', { id: 'download-record', onclick: downloadRecord }, 'Download record'),
        el('button', { id: 'load-record', onclick: () => document.getElementById('record-file').click() }, 'Load record'),
        el('input', { type: 'file', id: 'record-file', accept: '.txt,text/plain', style: 'display:none', onchange: e => loadRecord(e.target.files[0]) })))));
  await refreshGame();
}

// The game on the analysis board: its start as the root, its moves as the line.
function analyseGame() {
  const s = play.state;
  if (!s) return;
  newRoot(s.start);
  analysis.line = [...play.moves];
  analysis.future = [...play.moves];
  location.hash = analysisAddress(s.start, play.moves);
}

function copyText(t) {
  if (navigator.clipboard) navigator.clipboard.writeText(t).catch(() => {});
}

function downloadRecord() {
  if (!play.state) return;
  const blob = new Blob([play.state.record], { type: 'text/plain' });
  const a = el('a', { href: URL.createObjectURL(blob), download: 'fanorona-game.txt' });
  document.body.append(a);
  a.click();
  a.remove();
}

function playerToMove() {
  return play.state && (play.state.side === 'white' ? play.white : play.black);
}

// What a failed request says: the server's own error, or that it did not answer and what
// to do then (`then`: on the play page, its Retry button).
function failure(e, then = 'Retry when it is back') {
  return e.status === undefined ? `the server did not answer (${e.message}): ${then}` : e.message;
}
const AGAIN = 'try again when it is back';

// Asks the server for the game after play.moves. `tentative` moves at the end (and a
// resignation, `resigning`) are taken back if it fails, so the page never holds what the
// server has not accepted. While it waits, the board takes no clicks. Whether the server
// took it (undefined when a newer request took over).
async function refreshGame(tentative = 0, resigning = false) {
  const gen = ++generation;
  // A player's answer to an older game will not come back here.
  play.thinking = false;
  play.retry = null;
  play.pending = true;
  let failed = false;
  try {
    const s = await api('POST', '/api/game', { start: play.start, moves: play.moves, resigned: play.resigned, white: play.white, black: play.black });
    if (gen !== generation) return undefined;
    play.state = s;
    play.error = '';
    // What a refused new game goes back to.
    play.accepted = { start: play.start, moves: [...play.moves], resigned: play.resigned, white: play.white, black: play.black };
  } catch (e) {
    if (gen !== generation) return undefined;
    failed = true;
    const taken = play.moves.splice(play.moves.length - tentative, tentative);
    if (resigning) play.resigned = false;
    play.error = failure(e);
    // Unanswered: Retry sends the same moves (and resignation) again.
    if (e.status === undefined) {
      play.retry = () => {
        play.moves.push(...taken);
        play.resigned = play.resigned || resigning;
        return refreshGame(taken.length, resigning);
      };
    }
  } finally {
    if (gen === generation) play.pending = false;
  }
  play.sel = null;
  play.choice = null;
  renderGame();
  // Only from a state the server gave for these moves: after a failure the board shows
  // the last good one, and a player asked from it would be asked again and again.
  const who = playerToMove();
  if (!failed && play.state && !play.state.end && who && who !== 'human') agentMove(gen, who);
  return !failed;
}

async function agentMove(gen, who) {
  play.thinking = true;
  renderGame();
  try {
    const r = await api('POST', '/api/agent', { start: play.start, moves: play.moves, player: who });
    if (gen !== generation) return;
    play.thinking = false;
    play.note = `${who} played ${r.move}` + (r.value ? ` (${r.value}, from the ${r.source})` : '') +
      ` in ${r.seconds.toFixed(2)} s` + (r.reason ? `: ${r.reason}` : '');
    play.moves.push(r.move);
    refreshGame(1);
  } catch (e) {
    if (gen !== generation) return;
    play.thinking = false;
    play.error = failure(e);
    // The player is asked again, for the same position.
    play.retry = () => agentMove(generation, who);
    renderGame();
  }
}

function renderGame() {
  const s = play.state;
  const holder = document.getElementById('board-holder');
  if (!holder || !s) {
    const err = document.getElementById('error');
    if (err) err.textContent = play.error;
    return;
  }
  const human = playerToMove() === 'human' && !s.end && !play.thinking;
  const { cells, marks } = human ? entryView(s, play.sel) : { cells: s.cells.split(''), marks: new Map() };
  const lastMove = play.sel ? null : markLast(s.history[s.history.length - 1], marks);
  let status;
  if (s.end) status = 'Game over: ' + s.end.text + ' (' + s.end.result + ')';
  else if (play.thinking) status = `${s.side} (${playerToMove()}) is thinking…`;
  else status = `${s.side} to move` + (human ? ' (you)' : '');
  showBoard(holder, drawBoard(s.board, cells, marks, human ? clickPoint : null, status, lastMove));
  document.getElementById('status').textContent = status;
  document.getElementById('status').dataset.over = s.end ? 'yes' : 'no';
  document.getElementById('error').textContent = play.error;
  document.getElementById('note').textContent = play.note;
  document.getElementById('position').value = s.position;
  const stop = document.getElementById('stop-chain');
  const exact = play.sel && play.sel.steps.length > 0 &&
    candidates(s.moves, play.sel).find(m => m.path.length === play.sel.steps.length);
  stop.disabled = !exact || !!play.choice;
  document.getElementById('resign').disabled = !human;
  // Only what can do something is offered.
  document.getElementById('cancel-move').disabled = !play.sel && !play.choice;
  // A hint is for the person to move, and only once the board is theirs.
  document.getElementById('resign-hint').disabled = !human || !!play.pending;
  // Nothing to take back before a move (or a resignation).
  document.getElementById('undo').disabled = !play.moves.length && !play.resigned;
  const hist = document.getElementById('history');
  hist.replaceChildren();
  for (let i = 0; i < s.history.length; i += 2) {
    const pair = s.history.slice(i, i + 2).map(h => h.notation).join('  ');
    hist.append(el('li', {}, pair));
  }
  const ch = document.getElementById('choice-holder');
  ch.replaceChildren();
  if (play.retry) {
    ch.append(el('button', {
      id: 'retry',
      onclick: () => { const f = play.retry; play.retry = null; play.error = ''; if (f) f(); },
    }, 'Retry'));
  }
  if (play.choice) {
    choiceButtons(play, ch, (to, kind) => {
      commitStep(to, kind);
      // The keyboard goes on from the point the piece went to.
      const g = document.querySelector(`#board-holder g.pt[data-index="${to}"]`);
      if (g) g.focus();
    });
    // The choice is what the keyboard answers next.
    if (!ch.contains(document.activeElement) && document.activeElement && document.activeElement.closest('#board-holder, #capture-choice') !== null) ch.querySelector('button').focus();
  }
}

// A move played, marked: its end point ringed, its path drawn (a player's capture chain is
// seen step by step), the pieces it took shown faint where they stood. `h` is a history
// entry; none without one.
function markLast(h, marks) {
  if (!h) return null;
  const points = [h.from, ...h.path];
  mark(marks, points[points.length - 1], 'last');
  for (const t of h.taken) mark(marks, t, 'captured');
  return { points, taken: h.taken, color: h.side === 'white' ? 'B' : 'W' };
}

// A legal move previewed (a move's view: from, path, captures): its end dotted, the pieces
// it would take faint; returns its path for the board to draw.
function markPreview(v, marks) {
  mark(marks, v.path[v.path.length - 1], 'target');
  for (const t of v.captures.flat()) mark(marks, t, 'taken');
  return { points: [v.from, ...v.path], color: null };
}

// A move typed on the play page: played if it is one of the legal moves here.
function typedPlayMove(input) {
  const s = play.state;
  const typed = input.value.trim();
  if (!typed || !s) return;
  const human = playerToMove() === 'human' && !s.end && !play.thinking;
  if (!human || play.pending) {
    play.error = s.end ? 'the game is over' : `not your move: ${s.side} (${playerToMove()}) moves`;
  } else {
    const m = typedMove(s.moves, typed);
    if (m) {
      input.value = '';
      play.error = '';
      play.choice = null;
      playMove(m.notation);
      return;
    }
    play.error = `'${typed}' is not a legal move here`;
  }
  renderGame();
}

// Esc: a half-made move (a piece chosen, steps of a chain, a capture to choose) is dropped.
function cancelPlayEntry() {
  if (!play.sel && !play.choice) return false;
  const focusBoard = document.activeElement && document.activeElement.closest('#capture-choice');
  const from = play.sel && play.state.board.points[play.sel.from].name;
  play.sel = null;
  play.choice = null;
  renderGame();
  // From the choice's buttons, back to the piece that was chosen.
  if (focusBoard && from) {
    const g = document.querySelector(`#board-holder g.pt[data-point="${from}"]`);
    if (g) g.focus();
  }
  return true;
}

function clickPoint(p) {
  // One move at a time: the last one is not answered yet.
  if (play.pending) return;
  clickOn(play, p, playMove, renderGame);
}

// A click at point `p` while a move is entered on `entry`'s board (Play's or the analysis
// board: each keeps its own `state`, `sel`, `choice` and `error`): a piece chosen, a step
// taken, or a choice asked for; `done` gets the move once it is whole.
function clickOn(entry, p, done, render) {
  const s = entry.state;
  entry.error = '';
  if (entry.choice) return;
  const froms = new Set(s.moves.map(m => m.from));
  if (!entry.sel || entry.sel.steps.length === 0) {
    if (entry.sel && p === entry.sel.from) { entry.sel = null; render(); return; }
    if (froms.has(p)) { entry.sel = { from: p, steps: [] }; render(); return; }
    if (!entry.sel) { entry.error = 'that piece cannot move: the ringed ones can'; render(); return; }
  }
  const k = entry.sel.steps.length;
  const opts = candidates(s.moves, entry.sel).filter(m => m.path.length > k && m.path[k] === p);
  if (!opts.length) { entry.error = 'not a legal step: the dots show where the piece can go'; render(); return; }
  const kinds = [...new Set(opts.map(m => m.kinds[k]))];
  if (kinds.length > 1) {
    entry.choice = { to: p, options: kinds.map(kind => ({ kind, taken: opts.find(m => m.kinds[k] === kind).captures[k] })) };
    render();
    return;
  }
  stepOn(entry, p, kinds[0], done, render);
}

function commitStep(to, kind) {
  stepOn(play, to, kind, playMove, renderGame);
}

// A step of the move entered on `entry`'s board: the move is done once no longer one goes on.
function stepOn(entry, to, kind, done, render) {
  entry.sel.steps.push({ to, kind });
  const k = entry.sel.steps.length;
  const cands = candidates(entry.state.moves, entry.sel);
  const exact = cands.find(m => m.path.length === k);
  const longer = cands.some(m => m.path.length > k);
  if (!longer && exact) { done(exact.notation); return; }
  render();
}

// The capture choice of `entry` (approach or withdrawal), as buttons in `holder`.
function choiceButtons(entry, holder, onChosen) {
  const { to, options } = entry.choice;
  const points = entry.state.board.points;
  holder.append(el('div', { class: 'choice', id: 'capture-choice' },
    `Capture at ${points[to].name} by `,
    options.map(o => el('button', {
      id: 'choose-' + (o.kind === 'A' ? 'approach' : 'withdrawal'),
      onclick: () => { entry.choice = null; onChosen(to, o.kind); },
    }, (o.kind === 'A' ? 'approach' : 'withdrawal') + ' (takes ' + o.taken.map(p => points[p].name).join(' ') + ')'))));
}

function stopChain() {
  if (!play.sel) return;
  const exact = candidates(play.state.moves, play.sel).find(m => m.path.length === play.sel.steps.length);
  if (exact) playMove(exact.notation);
}

function playMove(notation) {
  play.moves.push(notation);
  play.sel = null;
  play.note = '';
  refreshGame(1);
}

// The person to move gives up the game.
function resign() {
  if (!play.state || play.state.end || playerToMove() !== 'human') return;
  play.resigned = true;
  play.sel = null;
  refreshGame(0, true);
}

// A record (as downloaded here or written by `fanorona play --save`) read by the server,
// every move checked; the game goes on from where it stands, with the players chosen here.
async function loadRecord(file) {
  if (!file) return;
  const gen = generation;
  try {
    const s = await api('POST', '/api/record', { text: await file.text() });
    // Another game started, or the page left, meanwhile: this one is not wanted.
    if (gen !== generation) return;
    play.start = s.start;
    play.moves = s.history.map(h => h.notation);
    play.resigned = !!s.end && s.end.termination === 'resignation';
    play.sel = null;
    play.note = `loaded ${file.name}: ${play.moves.length} moves`;
    refreshGame();
  } catch (e) {
    if (gen !== generation) return;
    play.error = `${file.name}: ${failure(e, AGAIN)}`;
    renderGame();
  }
  const input = document.getElementById('record-file');
  if (input) input.value = '';
}

function undo() {
  if (play.resigned) {
    // Taking back the resignation.
    play.resigned = false;
    refreshGame();
    return;
  }
  if (!play.moves.length) return;
  const humans = [play.white, play.black].filter(p => p === 'human').length;
  play.moves.pop();
  // Back to a position where a person moves (against a player, its reply goes too).
  if (humans === 1) {
    const startSide = play.state.start.trim().endsWith('b') ? 'black' : 'white';
    const humanSide = play.white === 'human' ? 'white' : 'black';
    const sideAt = n => (n % 2 === 0) === (startSide === 'white') ? 'white' : 'black';
    while (play.moves.length && sideAt(play.moves.length) !== humanSide) play.moves.pop();
  }
  play.thinking = false;
  play.note = '';
  refreshGame();
}

async function hint() {
  // Never the other side's move: only a person to move is given one.
  if (!play.state || play.state.end || playerToMove() !== 'human' || play.thinking || play.pending) return;
  const gen = generation, plies = play.moves.length;
  document.getElementById('note').textContent = 'valuing every move…';
  try {
    const a = await api('POST', '/api/analyse', { start: play.start, moves: play.moves });
    // A move made meanwhile (a new game, an undo) makes the answer another position's.
    if (gen !== generation || play.moves.length !== plies) return;
    const best = a.analysis.moves.slice(0, 3).map(m => `${m.notation} (${[m.value,
      m.distance === null ? null : `${m.distance} ${m.distance === 1 ? 'ply' : 'plies'} to capture`,
      m.source].filter(x => x).join(', ')})`);
    play.note = 'best: ' + best.join(', ');
  } catch (e) {
    if (gen !== generation || play.moves.length !== plies) return;
    play.note = failure(e, AGAIN);
  }
  renderGame();
}

// --- Analysis -----------------------------------------------------------------------------

// `root` is the position the analysis started from and `line` the moves played from it on
// the board (each a history entry, so Back and Forward walk it); `future` is the longer line
// ← stepped back from, which → replays. `known` maps a root and line to the position after
// it, so stepping through a line asks the server only for its analysis.
const analysis = { root: null, line: [], future: [], known: new Map(), position: null, state: null, editing: false, cells: null, board: null, side: 'w', sel: null, choice: null, error: '', preview: null };

// A new position to analyse from: its line starts empty.
function newRoot(position) {
  analysis.root = position;
  analysis.line = [];
  analysis.future = [];
  analysis.variations = [];
}

// Whether `line` begins with `prefix`.
const startsWith = (line, prefix) => line.length >= prefix.length && prefix.every((m, i) => line[i] === m);

// The variations (the lines of the move tree, none a beginning of another) with `line`:
// kept as they are if one goes on through it, else it joins them, replacing those it
// goes on from.
function withVariation(variations, line) {
  if (!line.length || variations.some(v => startsWith(v, line))) return variations;
  return [...variations.filter(v => !startsWith(line, v)), line];
}

const lineKey = (root, line) => root + '|' + line.join(',');

// The address of the analysis of `root` after `line`.
function analysisAddress(root, line) {
  const q = { position: root };
  if (line.length) q.line = line.join(',');
  // The move tree, when it is more than the line and what follows it.
  const vars = analysis.variations || [];
  if (vars.length > 1) q.vars = vars.map(v => v.join(',')).join(';');
  return '#/analyse?' + new URLSearchParams(q);
}

// What the table's numbers are: the tables' distance counts to the next capture (each
// capture starts a smaller table), not to the game's end; the score is no value at all.
const PLIES_TITLE = 'Plies after this move until the next capture (or the end of the game, if that comes first) with best play, as the endgame tables count them: not the length of the whole game. Empty where no table with distances knows the position.';
const SCORE_TITLE = 'A rough material count after this move, for the side to move here: from -1 (it has no pieces left) to 1 (the opponent has none); a piece on a strong point counts half as much again. Only a guess: the value column says who wins.';

async function showAnalyse(mode = 'replace') {
  await info();
  if (!analysis.root) newRoot(INFO.boards.find(b => b.name === '5x9').start);
  const main = document.getElementById('main');
  const boardSel = el('select', { id: 'analyse-board' },
    el('option', { value: '' }, 'start of a board…'),
    INFO.boards.map(b => el('option', { value: b.start }, b.name)));
  boardSel.addEventListener('change', () => { if (boardSel.value) { newRoot(boardSel.value); runAnalysis('push'); } });
  main.replaceChildren(el('div', { class: 'columns' },
    el('div', { class: 'panel' },
      el('input', {
        type: 'text', id: 'analyse-move', class: 'move-entry not-editing', autocomplete: 'off', spellcheck: 'false',
        placeholder: 'type a move to play it here, then Enter', 'aria-label': 'type a move in notation to play it on the analysis board, then Enter',
        onkeydown: e => { if (e.key === 'Enter') { e.preventDefault(); typedAnalysisMove(e.target); } },
      }),
      el('div', { id: 'board-holder' }),
      el('div', { id: 'analysis-choice' }),
      el('div', { class: 'status', id: 'analysis-value', role: 'status', 'aria-live': 'polite' }),
      el('div', { class: 'line not-editing' },
        el('button', { id: 'line-back', title: 'the move before (←)', 'aria-label': 'one move back (left arrow)', onclick: () => stepLine(-1) }, '◀'),
        el('button', { id: 'line-forward', title: 'the next move of the line (→)', 'aria-label': 'one move forward (right arrow)', onclick: () => stepLine(1) }, '▶'),
        el('button', { id: 'flip', title: 'the board seen from the other side', onclick: () => { boardView.flipped = !boardView.flipped; drawAnalysisBoard(); } }, 'Flip'),
        el('span', { class: 'note', id: 'analysis-line' })),
      el('div', { id: 'analysis-variations', class: 'not-editing' }),
      el('div', { class: 'error', id: 'error' }),
      el('div', { class: 'note', id: 'note' })),
    el('div', { class: 'panel controls' },
      el('h3', {}, 'Position'),
      el('textarea', { id: 'analyse-position', class: 'not-editing', rows: 2, 'aria-label': 'the position: rows from the top, then w or b' }),
      el('div', {},
        el('button', { id: 'analyse', onclick: analyseTyped }, 'Analyse'),
        el('button', { id: 'edit', onclick: toggleEdit }, 'Set up pieces'),
        el('button', { id: 'solve-session', onclick: solveAsSession }, 'Solve as a session'),
        el('button', { id: 'play-from-here', onclick: playFromHere }, 'Play from here'),
        boardSel),
      el('p', { class: 'note', id: 'edit-note' }),
      el('h3', { class: 'not-editing' }, 'Moves, best first'),
      el('table', { id: 'analysis-moves', class: 'not-editing' },
        el('thead', {}, el('tr', {}, el('th', {}, 'move'), el('th', {}, 'value'), el('th', {}, 'from'),
          el('th', { id: 'plies-head', title: PLIES_TITLE }, 'plies to capture'),
          el('th', { id: 'score-head', title: SCORE_TITLE }, 'score'))),
        el('tbody', {})))));
  await runAnalysis(mode);
  // A session solved meanwhile may value this position: the analysis is asked again then.
  analysis.solved = null;
  watchSessions();
  every(5000, watchSessions);
}

// Once the certificates' check is over (asked each second, cheaply), the analysis of
// generation `gen` is asked again, unless the page moved on or pieces are being set up.
async function afterCheck(gen) {
  for (;;) {
    await new Promise(r => setTimeout(r, 1000));
    if (gen !== generation || analysis.editing) return;
    let p;
    try { p = await api('GET', '/api/proofs'); } catch (_) { return; }
    if (gen !== generation || analysis.editing) return;
    if (!p.checking) { runAnalysis('keep'); return; }
  }
}

// How many sessions are solved: when more are than at the last look, the open analysis is
// asked again (what they decided reaches it through the rote store and the certificates).
async function watchSessions() {
  if (analysis.editing || !analysis.state) return;
  let list;
  try { list = await api('GET', '/api/sessions'); } catch (_) { return; }
  const solved = list.filter(s => s.state === 'solved').length;
  const before = analysis.solved;
  analysis.solved = solved;
  if (before !== null && solved > before && location.hash.startsWith('#/analyse')) runAnalysis('keep');
}

// ← and →: along the line played, the address following (replaced: these walk the entries
// the moves pushed, they are not new ones).
function stepLine(d) {
  if (analysis.editing) return;
  const { line, future } = analysis;
  const extends_ = future.length > line.length && line.every((m, i) => future[i] === m);
  if (d < 0 && line.length) {
    if (!extends_) analysis.future = [...line];
    analysis.line = line.slice(0, -1);
    runAnalysis('replace');
  } else if (d > 0 && extends_) {
    analysis.line = future.slice(0, line.length + 1);
    runAnalysis('replace');
  }
}

// A move typed on the analysis page: played as a click on its row would.
function typedAnalysisMove(input) {
  const a = analysis.state;
  const typed = input.value.trim();
  if (!typed || !a || analysis.editing) return;
  const m = typedMove(a.analysis.moves, typed);
  if (!m) {
    document.getElementById('error').textContent = `'${typed}' is not a legal move here`;
    return;
  }
  input.value = '';
  playAnalysed(m);
}

// A move of the analysis played on the board: the line grows by it, a new history entry.
function playAnalysed(m) {
  analysis.sel = null;
  analysis.choice = null;
  analysis.preview = null;
  const line = [...analysis.line, m.notation];
  analysis.variations = withVariation(analysis.variations || [], line);
  analysis.known.set(lineKey(analysis.root, line), m.after);
  const future = analysis.future;
  if (!(future.length >= line.length && line.every((x, i) => future[i] === x))) analysis.future = [...line];
  analysis.line = line;
  runAnalysis('push');
}

// The position after `line` from `root`, through the server's rules. A line with a move
// that is not legal gives the position before that move and says which move it was.
async function resolveLine(root, line) {
  try {
    const s = await api('POST', '/api/game', { start: root, moves: line });
    return { position: s.position, good: line.length, error: '' };
  } catch (e) {
    const m = e.status === 400 && /^move (\d+) '([^']*)': (.*)$/s.exec(e.message);
    const n = m ? Number(m[1]) : 0;
    if (!m || n < 1 || n > line.length) throw e;
    const good = n - 1;
    const position = good ? (await api('POST', '/api/game', { start: root, moves: line.slice(0, good) })).position : root;
    const shown = good ? `the position after move ${good}` : 'the position the line starts from';
    return { position, good, error: `move ${n} '${m[2]}' of the line in the address is not legal here (${m[3]}): shown is ${shown}` };
  }
}

// The position typed in the box; an empty box is said to be one, not taken for a start.
// While pieces are set up, the board being set up (the box is hidden then).
function analyseTyped() {
  if (analysis.editing) { toggleEdit(); return; }
  const typed = document.getElementById('analyse-position').value.trim();
  if (!typed) {
    document.getElementById('error').textContent = 'type a position (rows from the top, then w or b) or choose a board';
    return;
  }
  newRoot(typed);
  runAnalysis('push');
}

// Analyses the position after `analysis.line` from `analysis.root`, each on its own (as a
// set-up position: tables, proofs and certificates, not the game's repetitions). `mode`:
// 'push' a history entry for it, 'replace' the current one, or 'keep' the address (the
// address came first: Back, Forward, a link).
async function runAnalysis(mode = 'replace') {
  const gen = ++generation;
  // A move half entered on the old position's board goes with it.
  analysis.sel = null;
  analysis.choice = null;
  analysis.preview = null;
  // Whether this request is a set-up's (read once: a newer request takes the question over).
  const fromSetup = analysis.fromSetup;
  analysis.fromSetup = false;
  const root = analysis.root;
  let line = [...analysis.line];
  let lineError = '';
  document.getElementById('error').textContent = '';
  document.getElementById('note').textContent = 'valuing every move…';
  try {
    let pos = root;
    if (line.length) {
      pos = analysis.known.get(lineKey(root, line));
      if (!pos) {
        const r = await resolveLine(root, line);
        if (gen !== generation) return;
        pos = r.position;
        if (r.error) {
          // The address keeps the line as it was given, to be mended there.
          lineError = r.error;
          line = line.slice(0, r.good);
          analysis.line = line;
          analysis.future = [];
          mode = 'keep';
        }
        analysis.known.set(lineKey(root, line), pos);
      }
    }
    // A move tree from the address is checked once, move by move.
    let varError = '';
    if (analysis.checkVariations) {
      analysis.checkVariations = false;
      varError = await checkVariations(root);
      if (gen !== generation) return;
    }
    analysis.position = pos;
    document.getElementById('analyse-position').value = pos;
    // The line goes too: the certificates rooted at the root are walked along it.
    const asked = { start: pos };
    if (line.length) asked.line_from = { start: root, moves: line };
    const a = await api('POST', '/api/analyse', asked);
    if (gen !== generation) return;
    analysis.state = a;
    // What a set-up starts from, even after a position the server refused.
    analysis.board = a.board;
    analysis.lastCells = a.cells;
    // The root as the server writes it (a board's name stays a name: it is shorter).
    if (!line.length && root.includes('/')) analysis.root = a.position;
    // Whatever asked for it, a position analysed ends a set-up.
    endEditing();
    // The address names the position and the line, so a reload or a link shows it again.
    const address = analysisAddress(analysis.root, line);
    if (mode === 'push' && location.hash !== address) history.pushState(null, '', address);
    else if (mode !== 'keep') history.replaceState(null, '', address);
    renderAnalysis();
    document.getElementById('error').textContent = [lineError, varError].filter(x => x).join('; ');
    const an = a.analysis;
    const note = document.getElementById('note');
    note.textContent =
      (an.tables ? `tables of ${a.board.name} up to ${an.tables.pieces} pieces` : `no tables for ${a.board.name}`) +
      (an.rote !== null ? `; rote store ${an.rote} entries` : '; rote store: no daemon') +
      (an.certificates ? `; ${an.certificates} checked certificates` : '');
    // Certificates still being checked may say more of this position: asked again.
    if (an.certificates_checking) {
      note.append('; ', el('span', { id: 'analysis-checking' }, checkingWords(an.certificates_checking)));
      afterCheck(gen);
    }
    // A certificate the checker refused is not used: said here, the reason on Proofs.
    if (an.certificates_refused) {
      note.append('; ', el('a', { href: '#/proofs', id: 'refused-certificates' },
        `${an.certificates_refused} certificate${an.certificates_refused > 1 ? 's' : ''} refused by the checker`));
    }
  } catch (e) {
    if (gen !== generation) return;
    if (fromSetup && analysis.editing) {
      // A set-up the server refuses (a side without pieces, say) stays on the board, still
      // being set up, to be mended.
      renderAnalysis();
      document.getElementById('error').textContent = failure(e, AGAIN);
      document.getElementById('note').textContent = '';
      return;
    }
    // What is shown must belong to the text in the box: the last position's board and
    // moves go (and a set-up, if one was under way).
    endEditing();
    analysis.state = null;
    analysis.position = null;
    document.getElementById('analysis-line').textContent = '';
    document.getElementById('board-holder').replaceChildren();
    document.getElementById('analysis-value').textContent = '';
    document.querySelector('#analysis-moves tbody').replaceChildren();
    document.getElementById('error').textContent = failure(e, AGAIN);
    document.getElementById('note').textContent = '';
  }
}

// Leaves the set-up: its controls go, the analysis's come back.
function endEditing() {
  analysis.editing = false;
  document.getElementById('edit').textContent = 'Set up pieces';
  document.getElementById('edit-note').replaceChildren();
  editingView(false);
}

// While pieces are set up, what belongs to the position analysed before (its text, its
// moves and their values, its line) is hidden: it is not the board shown.
function editingView(on) {
  for (const e of document.querySelectorAll('#main .not-editing')) e.hidden = on;
}

// The board being set up.
function renderSetup() {
  const holder = document.getElementById('board-holder');
  showBoard(holder, drawBoard(analysis.board, analysis.cells, new Map(), editPoint, 'setting up'));
  const val = document.getElementById('analysis-value');
  val.textContent = 'setting up: click a point (or Enter on it) to cycle empty, White, Black';
  val.className = 'status';
  const text = document.getElementById('setup-position');
  if (text) text.textContent = setUpPosition();
}

// The analysis board: moves entered on it by clicks, as on Play; the last move of the line
// marked; a row pointed at (or focused) previewed, its path drawn and its captures faint.
function drawAnalysisBoard() {
  const a = analysis.state;
  const holder = document.getElementById('board-holder');
  if (!a || !holder) return;
  const entering = !a.end && (analysis.sel || !analysis.preview);
  const { cells, marks } = entering ? entryView(a, analysis.sel) : { cells: a.cells.split(''), marks: new Map() };
  let lastMove = null;
  const shown = analysis.preview && !analysis.sel && a.moves.find(m => m.notation === analysis.preview);
  if (shown) {
    lastMove = markPreview(shown, marks);
  } else if (!analysis.sel && a.last) {
    lastMove = markLast(a.last, marks);
  }
  const caption = `${a.side} to move: ${a.analysis.value}`;
  showBoard(holder, drawBoard(a.board, cells, marks, a.end ? null : p => clickOn(analysis, p, analysedNotation, renderAnalysisEntry), caption, lastMove));
  const ch = document.getElementById('analysis-choice');
  if (ch) {
    ch.replaceChildren();
    if (analysis.choice) choiceButtons(analysis, ch, (to, kind) => stepOn(analysis, to, kind, analysedNotation, renderAnalysisEntry));
  }
}

// The move tree: each variation a row of moves, each move a link to the position after it;
// the moves of the line on the board marked.
function renderVariations() {
  const holder = document.getElementById('analysis-variations');
  if (!holder) return;
  const vars = analysis.variations || [];
  holder.replaceChildren();
  if (vars.length < 2) return;
  holder.append(el('div', { class: 'note' }, 'variations:'));
  vars.forEach((v, k) => {
    const row = el('div', { class: 'variation', 'data-variation': k });
    v.forEach((m, i) => {
      const upto = v.slice(0, i + 1);
      const on = startsWith(analysis.line, upto);
      row.append(el('a', {
        href: analysisAddress(analysis.root, upto), class: 'var-move' + (on ? ' on' : ''), 'data-move': m,
        onclick: e => { e.preventDefault(); analysis.line = upto; analysis.future = v; runAnalysis('push'); },
      }, m), ' ');
    });
    holder.append(row);
  });
}

// The variations an address named, each played from the root: one with a move that is
// not legal keeps the moves before it, and says which it was.
async function checkVariations(root) {
  const errors = [];
  const kept = [];
  for (const [k, v] of (analysis.variations || []).entries()) {
    const r = await resolveLine(root, v);
    if (r.error) errors.push(`variation ${k + 1}: ${r.error.replace(/ of the line in the address.*$/, '')}: kept to move ${r.good}`);
    kept.push(v.slice(0, r.good));
  }
  analysis.variations = kept.filter(v => v.length).reduce(withVariation, []);
  return errors.join('; ');
}

// The board and its error while a move is entered on the analysis board.
function renderAnalysisEntry() {
  drawAnalysisBoard();
  document.getElementById('error').textContent = analysis.error;
}

// A move entered on the analysis board by clicks: played as its row would be.
function analysedNotation(notation) {
  const m = analysis.state.analysis.moves.find(x => x.notation === notation);
  analysis.sel = null;
  analysis.choice = null;
  if (m) playAnalysed(m);
}

function renderAnalysis() {
  if (analysis.editing) { renderSetup(); return; }
  const a = analysis.state;
  if (!a) return;
  const holder = document.getElementById('board-holder');
  const v = a.analysis.value;
  // An ended game is headed by how it ended: lost, won or drawn, not a bound.
  const headline = a.end ? `${a.side} to move: ${a.end.winner ? (a.end.winner === a.side ? 'won' : 'lost') : 'drawn'} (${a.end.text})` : `${a.side} to move: ${v}`;
  drawAnalysisBoard();
  const val = document.getElementById('analysis-value');
  val.textContent = headline;
  val.className = 'status ' + valueClass(v);
  const body = document.querySelector('#analysis-moves tbody');
  body.replaceChildren();
  for (const m of a.analysis.moves) {
    const preview = on => () => { analysis.preview = on ? m.notation : null; drawAnalysisBoard(); };
    body.append(rowKeys(el('tr', {
      class: 'clickable', 'data-move': m.notation, onclick: () => playAnalysed(m),
      onmouseenter: preview(true), onmouseleave: preview(false), onfocus: preview(true), onblur: preview(false),
    },
      el('td', { class: 'mv' }, m.notation),
      el('td', { class: 'value ' + valueClass(m.value) }, m.value),
      el('td', { class: 'source' }, m.source || '-'),
      el('td', { class: 'num' }, m.distance === null ? '' : m.distance),
      el('td', { class: 'num' }, m.score === null ? '' : m.score.toFixed(3)))));
  }
  if (!a.analysis.moves.length) body.append(el('tr', {}, el('td', { colspan: 5 }, a.end ? a.end.text : 'no legal move')));
  const { line, future } = analysis;
  document.getElementById('analysis-line').textContent = line.length ? 'line: ' + line.join(' ') : '';
  renderVariations();
  document.getElementById('line-back').disabled = !line.length;
  document.getElementById('line-forward').disabled =
    !(future.length > line.length && line.every((m, i) => future[i] === m));
}

async function toggleEdit() {
  if (!analysis.editing) {
    const a = analysis.state;
    if (a) {
      analysis.cells = a.cells.split('');
      analysis.side = a.side === 'white' ? 'w' : 'b';
    } else if (analysis.board && analysis.lastCells) {
      // The box held a position the server refused: the last board analysed is set up.
      analysis.cells = analysis.lastCells.split('');
    } else {
      // Nothing analysed yet on this page: the standard board's start.
      const gen = generation;
      try {
        const g = await api('POST', '/api/game', { start: '5x9' });
        if (gen !== generation) return;
        analysis.board = g.board;
        analysis.cells = g.cells.split('');
        analysis.side = 'w';
      } catch (e) {
        document.getElementById('error').textContent = failure(e, AGAIN);
        return;
      }
    }
    analysis.editing = true;
    document.getElementById('error').textContent = '';
    document.getElementById('edit').textContent = 'Done: analyse';
    document.getElementById('edit-note').replaceChildren(
      el('label', {}, 'Side to move: ',
        el('select', { id: 'edit-side', onchange: e => { analysis.side = e.target.value; renderSetup(); } },
          el('option', { value: 'w', selected: analysis.side === 'w' }, 'White'),
          el('option', { value: 'b', selected: analysis.side === 'b' }, 'Black'))),
      ' ',
      el('button', { id: 'clear-board', onclick: () => { analysis.cells = analysis.cells.map(() => '.'); renderSetup(); } }, 'Clear board'),
      el('div', {}, 'being set up: ', el('code', { id: 'setup-position' })));
    editingView(true);
    renderSetup();
  } else {
    newRoot(setUpPosition());
    analysis.fromSetup = true;
    runAnalysis('push');
  }
}

// The position being set up: its rows from the top, then the side to move.
function setUpPosition() {
  const b = analysis.board;
  const rows = [];
  for (let r = b.rows - 1; r >= 0; r--) {
    let row = '';
    for (let c = 0; c < b.cols; c++) row += analysis.cells[r * b.cols + c];
    rows.push(row);
  }
  return rows.join('/') + ' ' + analysis.side;
}

function editPoint(p) {
  const next = { '.': 'W', 'W': 'B', 'B': '.' };
  analysis.cells[p] = next[analysis.cells[p]];
  renderAnalysis();
}

// The position on the analysis board, as the start of a game on Play: the players are
// chosen there, then "New game".
function playFromHere() {
  const a = analysis.state;
  if (a) playFrom(a.position);
}

// A position as the start of a game on Play (the explorer's "Play from here" too).
function playFrom(position) {
  play.start = position;
  play.moves = [];
  play.state = null;
  play.resigned = false;
  location.hash = '#/play';
}

async function solveAsSession() {
  // The board being set up, if it is; else the position in the box.
  const pos = analysis.editing && analysis.board ? setUpPosition() : document.getElementById('analyse-position').value.trim();
  // One click, one session: the button waits for the answer.
  const button = document.getElementById('solve-session');
  button.disabled = true;
  try {
    const r = await api('POST', '/api/sessions', { target: pos });
    location.hash = '#/session/' + r.id;
  } catch (e) {
    document.getElementById('error').textContent = failure(e, AGAIN);
  } finally {
    button.disabled = false;
  }
}

// --- Sessions -----------------------------------------------------------------------------

async function showSessions() {
  const main = document.getElementById('main');
  main.replaceChildren(el('h2', {}, 'Solve sessions'),
    el('div', { class: 'error', id: 'error' }),
    el('table', { id: 'sessions' },
      el('thead', {}, el('tr', {}, ['id', 'name', 'state', 'value', 'nodes', 'speed', 'root'].map(h => el('th', {}, h)))),
      el('tbody', {})),
    el('p', { class: 'note' }, 'Start one from the analysis page ("Solve as a session"), or with `fanorona session start`.'));
  const gen = generation;
  const load = async () => {
    try {
      const list = await api('GET', '/api/sessions');
      if (gen !== generation) return;
      document.getElementById('error').textContent = '';
      const body = document.querySelector('#sessions tbody');
      body.replaceChildren();
      for (const s of list) {
        const rate = (s.live || []).reduce((t, p) => t + (p.nodes_per_second || 0), 0);
        body.append(rowKeys(el('tr', { class: 'clickable', 'data-session': s.id, onclick: () => { location.hash = '#/session/' + s.id; } },
          el('td', {}, s.id), el('td', {}, s.name), el('td', { class: 'state-' + s.state }, s.state),
          el('td', {}, s.value || '-'), el('td', { class: 'num' }, fmtNumber(s.nodes)),
          el('td', { class: 'num' }, fmtRate(rate)), el('td', {}, s.root))));
      }
      if (!list.length) body.append(el('tr', {}, el('td', { colspan: 7 }, 'no sessions yet')));
    } catch (e) {
      if (gen !== generation) return;
      document.getElementById('error').textContent = e.message;
    }
  };
  await load();
  if (gen === generation) every(2000, load);
}

const session = { id: null, logFrom: 0, lines: [], polling: false };

async function showSession(id) {
  session.id = id;
  session.logFrom = 0;
  session.lines = [];
  const main = document.getElementById('main');
  const save = (path, name) => async e => {
    e.preventDefault();
    try { await download(path, name); } catch (err) { document.getElementById('error').textContent = err.message; }
  };
  const act = a => async () => {
    document.getElementById('error').textContent = a + '…';
    try {
      await api('POST', `/api/sessions/${id}/${a}`, {});
      document.getElementById('error').textContent = '';
      refreshSession();
    } catch (e) { document.getElementById('error').textContent = e.message; }
  };
  main.replaceChildren(
    el('h2', { id: 'session-title' }, 'Session ' + id),
    el('div', { id: 'session-info' }),
    el('div', {},
      el('button', { id: 'pause', onclick: act('pause') }, 'Pause'),
      el('button', { id: 'resume', onclick: act('resume') }, 'Resume'),
      el('button', { id: 'stop', onclick: act('stop') }, 'Stop'),
      el('a', { href: '#', id: 'csv', onclick: save(`/api/sessions/${id}/curve.csv`, `session-${id}-curve.csv`) }, 'curve CSV'), ' · ',
      el('a', { href: '#', id: 'png', onclick: save(`/api/sessions/${id}/curve.png`, `session-${id}-curve.png`) }, 'curve PNG')),
    el('div', { class: 'error', id: 'error' }),
    el('div', { id: 'chart-holder' }),
    el('p', { class: 'note', id: 'curve-count' }),
    el('h3', {}, 'Progress log'),
    el('pre', { class: 'log', id: 'log' }),
    el('h3', {}, 'Where the nodes go'),
    el('p', { class: 'note' }, 'Each question\'s first-level tree as last checkpointed: the moves at a position with their proof and disproof numbers and the nodes below them. Click a move to go down, a move of the line above to go back up.'),
    el('div', {},
      el('button', { id: 'tree-load', onclick: () => loadTree(tree.line, false) }, 'Show the tree here'),
      el('button', { id: 'tree-heaviest', onclick: () => loadTree(tree.line, true) }, 'Follow the heaviest line')),
    el('div', { class: 'note', id: 'tree-line' }),
    el('div', { class: 'error', id: 'tree-error' }),
    el('div', { class: 'columns' },
      el('div', { id: 'tree-board' }),
      el('div', { id: 'tree-questions' })));
  tree.line = [];
  session.gone = false;
  const gen = generation;
  await refreshSession();
  if (gen === generation && !session.gone) every(2000, refreshSession);
}

// The first-level tree explorer: the line from the root it shows, the last answer.
const tree = { line: [] };

function fmtProof(n) {
  return n >= 4e18 ? '∞' : fmtNumber(n);
}

async function loadTree(line, heaviest) {
  const id = session.id, gen = generation;
  const err = document.getElementById('tree-error');
  err.textContent = 'reading the tree…';
  try {
    const q = new URLSearchParams({ line: line.join(' ') });
    if (heaviest) q.set('heaviest', 'true');
    const t = await api('GET', `/api/sessions/${id}/moves?${q}`);
    if (gen !== generation) return;
    tree.line = line;
    err.textContent = '';
    renderTree(t);
    // A link to this node of the tree (kept out of the history: no page change).
    const link = `#/session/${id}/tree?` + new URLSearchParams({ line: line.join(' '), ...(heaviest ? { heaviest: '1' } : {}) });
    history.replaceState(null, '', link);
  } catch (e) {
    if (gen !== generation) return;
    err.textContent = e.message;
  }
}

// What a question's numbers after a move say of it for `mover`: "X wins?" proven there (pn
// 0) makes it a win for X and a loss for X's opponent; disproven (dn 0), at most a draw for
// X and at least a draw for the opponent; anything else is still open.
function proofValue(m, attacker, mover) {
  if (m.pn === 0) return mover === attacker ? 'win' : 'loss';
  if (m.dn === 0) return mover === attacker ? 'at most a draw' : 'at least a draw';
  return 'open';
}

function moveRow(m, line, attacker, mover) {
  const v = proofValue(m, attacker, mover);
  return rowKeys(el('tr', { class: 'clickable', 'data-move': m.move, onclick: () => loadTree(line, false) },
    el('td', {}, m.move + (m.rote ? ' (rote store)' : '')),
    el('td', { class: 'value ' + valueClass(v), title: `for ${mover}, who plays it` }, v),
    el('td', { class: 'num' }, fmtProof(m.pn)),
    el('td', { class: 'num' }, fmtProof(m.dn)),
    el('td', { class: 'num' }, fmtNumber(m.nodes))));
}

function moveTable(rows, cls) {
  return el('table', { class: cls },
    el('thead', {}, el('tr', {}, ['move', 'value', 'pn', 'dn', 'nodes'].map(h => el('th', {}, h)))),
    el('tbody', {}, rows));
}

function otherSide(side) {
  return side === 'white' ? 'black' : 'white';
}

function renderTree(t) {
  const line = tree.line;
  const crumbs = [el('a', { href: '#', 'data-depth': 0, onclick: e => { e.preventDefault(); loadTree([], false); } }, 'root')];
  line.forEach((m, i) => crumbs.push(' › ', el('a', { href: '#', 'data-depth': i + 1, onclick: e => { e.preventDefault(); loadTree(line.slice(0, i + 1), false); } }, m)));
  document.getElementById('tree-line').replaceChildren(...crumbs, el('div', { id: 'tree-position' }, `${t.side} to move: ${t.position}`));
  document.getElementById('tree-board').replaceChildren(drawBoard(t.board, t.cells.split(''), new Map(), null, `${t.side} to move`));
  const out = [];
  for (const q of t.questions) {
    const head = `${q.attacker} wins? ${q.outcome}: root pn ${fmtProof(q.pn)}, dn ${fmtProof(q.dn)}, first level ${fmtNumber(q.first_level)} nodes`;
    const box = el('div', { class: 'tree-question', 'data-attacker': q.attacker }, el('h4', {}, head));
    if (typeof q.reached === 'object') {
      box.append(el('p', { class: 'note' }, q.reached.outside.after === 0 ? 'this tree is its root alone' : `this tree goes no further than move ${q.reached.outside.after} of the line`));
    } else {
      if (line.length) box.append(el('p', { class: 'note' }, `here: pn ${fmtProof(q.at.pn)}, dn ${fmtProof(q.at.dn)}, ${fmtNumber(q.at.nodes)} nodes` + (q.reached === 'leaf' ? ' (a leaf)' : '')));
      if (q.moves.length) box.append(moveTable(q.moves.map(m => moveRow(m, [...line, m.move], q.attacker, t.side)), 'tree-moves'));
      if (q.heaviest && q.heaviest.length) {
        box.append(el('p', { class: 'note' }, 'the heaviest line from here:'));
        box.append(moveTable(q.heaviest.map((m, i) => moveRow(m, [...line, ...q.heaviest.slice(0, i + 1).map(h => h.move)], q.attacker, i % 2 ? otherSide(t.side) : t.side)), 'tree-heaviest'));
      }
    }
    out.push(box);
  }
  if (!out.length) out.push(el('p', { class: 'note' }, 'no question has a tree yet'));
  document.getElementById('tree-questions').replaceChildren(...out);
}

// Each question's jobs on the cluster ([cluster] in the daemon's config): where they go,
// how many, and each worker that answered.
function jobsLines(views) {
  const now = Date.now() / 1000;
  return views.map(j => {
    const box = el('div', { class: 'jobs', 'data-goal': j.goal });
    box.append(el('div', {}, `${j.goal} wins? jobs on ${j.place}` + (j.connected ? '' : ' (not reached)') +
      `: ${j.in_flight} in flight, ${fmtNumber(j.sent)} sent, ${fmtNumber(j.answered)} answered, ${j.redelivered} redelivered, ${j.resent} sent again, ${j.stale} stale`));
    if (j.problem) box.append(el('div', { class: 'error' }, j.problem));
    if (j.workers.length) {
      const rows = j.workers.map(w => el('tr', { class: 'worker' },
        el('td', {}, w.name), el('td', {}, w.host), el('td', {}, String(w.threads)),
        el('td', {}, fmtNumber(w.jobs)), el('td', {}, fmtRate(w.nodes / Math.max(w.seconds, 1e-9))),
        el('td', {}, `${Math.max(0, Math.round(now - w.last_heard))} s ago`)));
      box.append(el('table', { class: 'workers' },
        el('tr', {}, ...['worker', 'host', 'threads', 'jobs', 'nodes/s', 'last heard'].map(h => el('th', {}, h))),
        ...rows));
    }
    return box;
  });
}

function progressLine(p) {
  const n = v => (v === 'inf' ? 'inf' : fmtNumber(v));
  // In UTC, as the daemon's own log and the progress files have it: said so.
  const t = new Date(p.time * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
  return `${t} ${p.event.padStart(10)} ${p.goal} wins? it ${p.iteration} nodes ${fmtNumber(p.nodes)} (${fmtRate(p.nodes_per_second)}) pn ${n(p.root_pn)} dpn ${n(p.root_dpn)} first ${p.first_level}` +
    (p.message ? ' | ' + p.message : '');
}

async function refreshSession() {
  // One poll at a time: two reading the log from the same offset would show lines twice.
  if (session.polling) return;
  session.polling = true;
  try {
    await pollSession();
  } finally {
    session.polling = false;
  }
}

async function pollSession() {
  const id = session.id, gen = generation;
  try {
    const c = await api('GET', `/api/sessions/${id}/curve`);
    if (gen !== generation) return;
    const s = c.status;
    const goals = (s.goals || []).map(g => `${g.attacker} wins? ${g.outcome || 'open'}`).join('; ');
    const rate = (s.live || []).reduce((t, p) => t + (p.nodes_per_second || 0), 0);
    // Nodes now: each question's live count where it runs, else its checkpointed one.
    const nodes = (s.goals || []).reduce((t, g) => {
      const l = (s.live || []).find(p => p.goal === g.attacker);
      return t + (l ? l.nodes : g.nodes || 0);
    }, 0);
    document.getElementById('session-title').textContent = `Session ${id}: ${s.name}`;
    // Only what the state allows.
    const st = s.state;
    document.getElementById('pause').disabled = !(st === 'running' || st === 'queued' || st === 'waiting');
    document.getElementById('resume').disabled = !(st === 'paused' || st === 'stopped' || st === 'failed');
    document.getElementById('stop').disabled = st === 'solved' || st === 'stopped' || st === 'failed';
    document.getElementById('session-info').replaceChildren(
      el('div', {}, 'state: ', el('span', { id: 'session-state', class: 'state-' + s.state }, s.state),
        ` · value: ${s.value || 'not yet'} · nodes ${fmtNumber(nodes)} · ${fmtRate(rate)} · ${s.algo}`),
      el('div', { class: 'note' }, `${s.root} · ${goals}`),
      // A full disk, or why it failed or paused itself: said where the state is.
      ...[s.checkpoint_trouble, s.error].filter(Boolean).map(t => el('div', { class: 'error', id: 'session-trouble' }, t)),
      ...jobsLines(s.jobs || []));
    document.getElementById('chart-holder').replaceChildren(drawChart(c.points, c.infinite, s.goals || []));
    const count = document.getElementById('curve-count');
    count.textContent = `${c.total} points`;
    count.dataset.points = c.total;
    document.getElementById('error').textContent = '';
    const l = await api('GET', `/api/sessions/${id}/log?from=${session.logFrom}`);
    if (gen !== generation) return;
    session.logFrom = l.next;
    if (l.lines.length) {
      session.lines.push(...l.lines.map(progressLine));
      session.lines = session.lines.slice(-300);
      const pre = document.getElementById('log');
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.textContent = session.lines.join('\n');
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    }
  } catch (e) {
    if (gen !== generation) return;
    document.getElementById('error').textContent = failure(e, 'the page asks again on its own');
    if (e.status === 404) {
      // No such session: nothing to control, nothing more to read.
      session.gone = true;
      for (const b of ['pause', 'resume', 'stop']) document.getElementById(b).disabled = true;
      for (const t of timers) clearInterval(t);
      timers = [];
    }
  }
}

// The root's pn (red) and dpn (blue) against the iteration, log scale, one panel a question
// (the paper's Figures 7 to 9); an orange line where a run resumed from a checkpoint.
function drawChart(points, infinite, goalRecords) {
  const goals = [...new Set(points.map(p => p.goal))];
  // As wide as the page has room for (at most 760): scaled down to a phone's width, the
  // words would be a few pixels high. A narrow chart puts its title on two lines.
  const room = (document.getElementById('chart-holder') || {}).clientWidth || 760;
  const W = Math.max(280, Math.min(760, room)), H = 230, L = 60, R = 20, B = 30;
  const narrow = W < 600, T = narrow ? 38 : 24;
  const holder = el('div', { id: 'chart' });
  if (!points.length) { holder.append(el('p', { class: 'note' }, 'no curve points yet')); return holder; }
  for (const g of goals) {
    const ps = points.filter(p => p.goal === g);
    const finite = v => v > 0 && v < infinite;
    const ys = ps.flatMap(p => [p.pn, p.dpn]).filter(finite);
    const maxX = Math.max(1, ...ps.map(p => p.iteration));
    const maxY = Math.max(10, ...ys);
    const lx = i => L + (W - L - R) * (i / maxX);
    const ly = v => T + (H - T - B) * (1 - Math.log10(Math.max(1, v)) / Math.log10(maxY));
    const svg = sv('svg', { class: 'chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`, 'data-goal': g });
    for (let d = 1; d <= maxY; d *= 10) {
      svg.append(sv('line', { class: 'grid', x1: L, x2: W - R, y1: ly(d), y2: ly(d) }));
      const t = sv('text', { x: 4, y: ly(d) + 4 });
      t.textContent = d >= 1e6 ? d.toExponential(0) : String(d);
      svg.append(t);
    }
    const title = sv('text', { x: L, y: 16 });
    const last = ps[ps.length - 1];
    const ended = last.pn === 0 || last.pn >= infinite ? (last.pn === 0 ? ' proven' : ' disproven') : '';
    const counts = `${fmtNumber(last.nodes)} nodes, iteration ${fmtNumber(last.iteration)}`;
    title.textContent = `${g} wins?${ended} — pn (red), dpn (blue)` + (narrow ? '' : ', ' + counts);
    svg.append(title);
    if (narrow) {
      const second = sv('text', { x: L, y: 30 });
      second.textContent = counts;
      svg.append(second);
    }
    for (const [x, anchor, label] of [[L, 'start', '0'], [W - R, 'end', fmtNumber(maxX)], [(L + W - R) / 2, 'middle', 'iteration']]) {
      const t = sv('text', { x, y: H - 8, 'text-anchor': anchor });
      t.textContent = label;
      svg.append(t);
    }
    const record = goalRecords.find(r => r.attacker === g);
    for (const at of (record && record.resumed_at) || []) {
      if (at > maxX) continue;
      const line = sv('line', { class: 'resumed', x1: lx(at), x2: lx(at), y1: T, y2: H - B });
      const tip = sv('title', {});
      tip.textContent = `resumed from a checkpoint at iteration ${fmtNumber(at)}`;
      line.append(tip);
      svg.append(line);
    }
    for (const [key, cls] of [['pn', 'pn'], ['dpn', 'dpn']]) {
      const pts = ps.filter(p => finite(p[key])).map(p => `${lx(p.iteration).toFixed(1)},${ly(p[key]).toFixed(1)}`);
      if (pts.length) svg.append(sv('polyline', { class: cls, points: pts.join(' ') }));
    }
    holder.append(svg);
  }
  return holder;
}

// --- routing ------------------------------------------------------------------------------

async function route() {
  for (const t of timers) clearInterval(t);
  timers = [];
  generation++;
  const h = location.hash || '#/play';
  const tab = h.startsWith('#/session/') ? '#/sessions' : h;
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', tab.startsWith(a.getAttribute('href')));
  try {
    let m;
    if ((m = h.match(/^#\/analyse\?(.*)$/))) {
      // A position and a line named in the address (as the page writes it): analysed again,
      // the address kept as it is (it may be the history's).
      const q = new URLSearchParams(m[1]);
      const p = q.get('position');
      if (p) {
        analysis.root = p;
        analysis.line = (q.get('line') || '').split(',').map(x => x.trim()).filter(x => x);
        analysis.variations = (q.get('vars') || '').split(';')
          .map(v => v.split(',').map(x => x.trim()).filter(x => x)).filter(v => v.length)
          .reduce(withVariation, []);
        analysis.variations = withVariation(analysis.variations, analysis.line);
        analysis.checkVariations = analysis.variations.length > 0;
        const f = analysis.future;
        if (!(f.length >= analysis.line.length && analysis.line.every((x, i) => f[i] === x))) analysis.future = [...analysis.line];
      }
      await showAnalyse('keep');
    } else if (h.startsWith('#/analyse')) await showAnalyse();
    else if (h.startsWith('#/sessions')) await showSessions();
    else if ((m = h.match(/^#\/proofs\/walk\?(.*)$/))) await showProofWalk(m[1]);
    else if (h.startsWith('#/proofs')) await showProofs();
    else if ((m = h.match(/^#\/session\/(\d+)\/tree\?(.*)$/))) {
      // A node of a session's tree: the session's page, then the tree at that line.
      const q = new URLSearchParams(m[2]);
      await showSession(m[1]);
      const line = (q.get('line') || '').split(/\s+/).filter(x => x);
      await loadTree(line, q.get('heaviest') === '1');
    } else if ((m = h.match(/^#\/session\/(\d+)/))) await showSession(m[1]);
    else await showPlay();
  } catch (e) {
    document.getElementById('main').replaceChildren(el('div', { class: 'error', id: 'error' }, e.message));
  }
}

window.addEventListener('hashchange', route);

// Keys of the whole page; a text field keeps its own.
document.addEventListener('keydown', e => {
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.key === 'Escape' && (!location.hash || location.hash.startsWith('#/play'))) {
    if (cancelPlayEntry()) e.preventDefault();
    return;
  }
  const t = e.target;
  if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT')) return;
  const h = location.hash;
  if (h.startsWith('#/analyse') && (e.key === 'ArrowLeft' || e.key === 'ArrowRight')) {
    e.preventDefault();
    stepLine(e.key === 'ArrowLeft' ? -1 : 1);
  }
});
route();
