(function () {
'use strict';
const $ = (id) => document.getElementById(id);
const errorBox = $('script-errors');
for (const text of window.cuscopeErrors) {  // recorded before the body existed
  const line = document.createElement('div');
  line.textContent = text;
  errorBox.appendChild(line);
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}
const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// ---- Formatting, as the text reports format.
function fmtDur(ns) {
  ns = Number(ns) || 0;
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(1) + ' µs';
  return Math.round(ns) + ' ns';
}
const fmtPct = (share) => (100 * share).toFixed(1) + '%';
const fmtInt = (n) => Math.round(Number(n)).toLocaleString('en-US');
function fmtSi(v, unit) {
  const prefixes = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
  let i = 0;
  v = Number(v);
  while (Math.abs(v) >= 1000 && i < prefixes.length - 1) { v /= 1000; ++i; }
  return (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ' + prefixes[i] +
    unit;
}
function fmtBytes(b) {
  b = Number(b);
  if (b >= 1 << 30) return (b / (1 << 30)).toFixed(2) + ' GiB';
  if (b >= 1 << 20) return (b / (1 << 20)).toFixed(2) + ' MiB';
  if (b >= 1 << 10) return (b / (1 << 10)).toFixed(1) + ' KiB';
  return fmtInt(b) + ' B';
}
function fmtNumber(n) {
  const v = Number(n.value);
  switch (n.unit) {
    case 'ns': return fmtDur(v);
    case 'ratio': return fmtPct(v);
    case 'bytes': return fmtBytes(v);
    case '1/s': return fmtInt(v) + '/s';
    case '%': return v.toFixed(1) + '%';
    case 'FLOP/s': case 'Hz': return fmtSi(v, n.unit);
    case 'FLOP/B': return v.toPrecision(3) + ' FLOP/B';
    case 'cycles/inst': case 'waves': return v.toFixed(2);
    case 'warps': return v.toFixed(1);
    case '': return String(Number(v.toPrecision(6)));
    case 'count': return fmtInt(v);
    default: return fmtInt(v) + ' ' + n.unit;
  }
}

const D = JSON.parse($('cuscope-data').textContent);
// A rank set's page (format cuscope-rank-report/1) has no timeline, roofline or trace summary:
// the ranks' chart takes their place.
const RANK_SET = D.format === 'cuscope-rank-report/1';
const TL = D.timeline || {span_ns: 0, bucket_ns: 1, lanes: [], names: [], recorded_slices: 0, drawn_slices: 0,
  merged_lanes: 0};
const NAMES = TL.names;

// Slice categories, in the order of report_data.h's SliceCategory.
const CATEGORIES = [
  ['kernel', null], ['memcpy HtoD', '#2a9d8f'], ['memcpy DtoH', '#e76f51'], ['memcpy other', '#8d99ae'],
  ['memset', '#b5838d'], ['sync call', '#d62828'], ['memcpy/memset call', '#f4a261'], ['alloc/free call', '#9c6644'],
  ['setup call', '#6d597a'], ['launch call', '#457b9d'], ['other call', '#a8b2c1'], ['NVTX range', '#90be6d'],
];
function hashHue(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; ++i) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
  return (h >>> 0) % 360;
}
const kernelColors = new Map();
function sliceColor(category, name) {
  if (category !== 0) return CATEGORIES[category] ? CATEGORIES[category][1] : '#999';
  let c = kernelColors.get(name);
  if (!c) { c = 'hsl(' + hashHue(NAMES[name] || '') + ', 58%, 52%)'; kernelColors.set(name, c); }
  return c;
}

// ---- Header and overview.
function renderOverview() {
  if (RANK_SET) { renderRankSetOverview(); return; }
  const s = D.summary;
  const devs = D.devices.map((d) => 'GPU ' + d.id + ': ' + d.name + ' (sm_' + d.compute_capability.replace('.', '') +
    ', ' + d.sm_count + ' SMs)');
  $('run-info').textContent = [D.trace, D.session.host ? 'host ' + D.session.host : '', D.session.pid ? 'pid ' +
    D.session.pid : '',
    devs.join('; '), D.session.command ? 'command: ' + D.session.command : ''].filter(Boolean).join(' · ');
  document.title = 'cuscope report: ' + D.trace;
  const cards = $('cards');
  cards.appendChild(card('End to end', fmtDur(s.span_ns), 'first to last recorded activity'));
  for (const d of s.devices) {
    cards.appendChild(card('GPU ' + d.device + ' busy', fmtPct(d.busy_share), 'of its active ' +
      fmtDur(d.counted_active_ns)));
  }
  let kernelTime = 0;
  for (const d of s.devices) kernelTime += d.kernel_time_ns;
  cards.appendChild(card('Kernels', fmtInt(s.kernels), fmtDur(kernelTime) + ' kernel time'));
  cards.appendChild(card('Copies / memsets', fmtInt(s.memcpys) + ' / ' + fmtInt(s.memsets)));
  cards.appendChild(card('CUDA API calls', fmtInt(s.api_calls), fmtInt(s.records) + ' records'));
  cards.appendChild(card('Findings', String(D.findings.length), findingCounts()));
  const warn = $('warnings');
  for (const w of D.warnings) warn.appendChild(el('li', {text: w}));
  if (s.truncated) warn.appendChild(el('li', {text: 'the trace is truncated: the report covers what was read'}));
}

const card = (label, value, sub) => el('div', {class: 'card'}, el('div', {class: 'label', text: label}),
  el('div', {class: 'value', text: value}), sub ? el('div', {class: 'sub', text: sub}) : null);

function findingCounts() {
  const bySeverity = {error: 0, warning: 0, info: 0};
  for (const f of D.findings) bySeverity[f.severity] = (bySeverity[f.severity] || 0) + 1;
  return bySeverity.error + ' error, ' + bySeverity.warning + ' warning, ' + bySeverity.info + ' info';
}

function renderRankSetOverview() {
  const R = D.ranks;
  $('run-info').textContent = [D.trace, D.session.host ? 'hosts: ' + D.session.host : ''].filter(Boolean).join(' · ');
  document.title = 'cuscope report: ' + D.trace;
  const cards = $('cards');
  cards.appendChild(card('Ranks', fmtInt(R.rows.length), D.session.host ? 'on ' + D.session.host : ''));
  let communication = 0, exposed = 0;
  for (const r of R.rows) { communication += r.communication_ns; exposed += r.exposed_ns; }
  cards.appendChild(card('Collectives matched', fmtInt(R.matched_instances), 'on every rank with collectives'));
  cards.appendChild(card('Communication', fmtDur(communication), fmtDur(exposed) + ' of it exposed, all ranks'));
  cards.appendChild(card('Steps', R.step_name ? fmtInt(R.matched_steps) : '-',
    R.step_name ? '\'' + R.step_name + '\' on every rank' : 'no NVTX range repeats on the ranks'));
  cards.appendChild(card('Findings', String(D.findings.length), findingCounts()));
  const warn = $('warnings');
  for (const w of D.warnings) warn.appendChild(el('li', {text: w}));
}

// ---- Findings.
function renderFindings() {
  const box = $('findings');
  if (!D.findings.length) {
    box.appendChild(el('p', {}, el('span', {class: 'badge ok', text: 'ok'}), ' No rule raised a finding.'));
    return;
  }
  const healthy = !D.findings.some((f) => f.severity !== 'info');
  if (healthy) box.appendChild(el('p', {}, el('span', {class: 'badge ok', text: 'ok'}),
    ' Nothing wrong found: no rule raised a warning or an error.'));
  D.findings.forEach((f, i) => {
    const card = el('article', {class: 'finding sev-' + f.severity, id: 'finding-' + (i + 1)});
    card.appendChild(el('div', {class: 'finding-head'}, el('span', {text: '#' + (i + 1)}),
      el('span', {class: 'badge ' + f.severity, text: f.severity}), el('code', {text: f.rule_id})));
    card.appendChild(el('h3', {class: 'headline', text: f.headline}));
    if (f.recoverable_ns > 0) {
      card.appendChild(el('p', {class: 'recover'}, 'Could recover up to ', el('strong',
        {text: fmtDur(f.recoverable_ns)}),
        ' (an upper bound, not a promise)'));
    }
    card.appendChild(el('p', {}, el('strong', {text: 'What to change: '}), f.recommendation));
    if (f.offenders.length) {
      const rows = f.offenders.map((o) => el('tr', {}, el('td', {text: o.kind}), el('td', {class: 'name',
        text: o.display || o.name, title: o.name}),
        el('td', {class: 'num', text: o.count ? fmtInt(o.count) + '×' : ''}), el('td', {class: 'num',
          text: fmtDur(o.time_ns)})));
      card.appendChild(el('table', {class: 'offenders'}, el('thead', {}, el('tr', {}, el('th', {text: 'offender'}),
        el('th', {text: 'name'}), el('th', {class: 'num', text: 'count'}), el('th', {class: 'num', text: 'time'}))),
          el('tbody', {}, rows)));
    }
    const numbers = f.numbers.filter((n) => n.unit !== 'id');
    if (numbers.length) {
      const grid = el('div', {class: 'numbers'}, numbers.map((n) => el('div', {}, el('span', {class: 'k',
        text: n.key + ' = '}), fmtNumber(n))));
      card.appendChild(el('details', {}, el('summary', {text: 'numbers (' + numbers.length + ')'}), grid));
    }
    if (f.spans.length) {
      card.appendChild(el('p', {class: 'note'}, 'On the timeline: ', f.spans.map((sp) => el('button', {class: 'link',
        text: sp.label + ' (' + fmtDur(sp.end - sp.start) + ')', onclick: () => zoomTo(sp.start, sp.end, true)}))));
    }
    box.appendChild(card);
  });
}

// ---- Timeline and utilization: one time axis, zoomed and panned together.
const GUTTER = 200, ROW = 18, GROUP_ROW = 20, AXIS = 24, UTIL_ROW = 46;
const view = {t0: 0, t1: Math.max(1, TL.span_ns)};
let rows = [];       // {lane, y} and {group, y}
let canvasHeight = 0;
const lanes = TL.lanes.map((l) => {
  let maxDur = 0;
  for (let i = 1; i < l.slices.length; i += 6) maxDur = Math.max(maxDur, l.slices[i]);
  return Object.assign({}, l, {maxDur});
});

function layout() {
  rows = [];
  let y = AXIS, group = null;
  for (const lane of lanes) {
    if (lane.group !== group) {
      group = lane.group;
      rows.push({group, y});
      y += GROUP_ROW;
    }
    rows.push({lane, y});
    y += ROW;
  }
  canvasHeight = y + 4;
}

function setupCanvas(canvas, height) {
  const width = canvas.parentElement.clientWidth;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = width + 'px';
  canvas.style.height = height + 'px';
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return {ctx, width};
}

const xOf = (t, width) => GUTTER + (t - view.t0) / (view.t1 - view.t0) * (width - GUTTER);
const tOf = (x, width) => view.t0 + (x - GUTTER) / (width - GUTTER) * (view.t1 - view.t0);

function niceStep(range, target) {
  const raw = range / target;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function drawAxis(ctx, width, height) {
  const step = niceStep(view.t1 - view.t0, Math.max(2, (width - GUTTER) / 110));
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  for (let t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
    const x = xOf(t, width);
    ctx.fillStyle = '#e9ecf1';
    ctx.fillRect(x, AXIS - 4, 1, height - AXIS + 4);
    ctx.fillStyle = '#5d6677';
    ctx.fillText(fmtDur(t), x + 3, AXIS / 2);
  }
}

// First slice index (in slices, stride 6) whose start is >= t.
function lowerBound(slices, t) {
  let lo = 0, hi = slices.length / 6;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (slices[mid * 6] < t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

function drawTimeline() {
  const canvas = $('timeline');
  const {ctx, width} = setupCanvas(canvas, canvasHeight);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, canvasHeight);
  drawAxis(ctx, width, canvasHeight);
  ctx.textBaseline = 'middle';
  for (const row of rows) {
    if (row.group !== undefined) {
      ctx.fillStyle = '#eef1f5';
      ctx.fillRect(0, row.y, width, GROUP_ROW);
      ctx.fillStyle = '#1c2230';
      ctx.font = '600 12px system-ui, sans-serif';
      ctx.fillText(row.group, 6, row.y + GROUP_ROW / 2);
      continue;
    }
    const lane = row.lane, s = lane.slices;
    ctx.font = '11.5px system-ui, sans-serif';
    ctx.fillStyle = '#3b4456';
    ctx.fillText(lane.label, 16, row.y + ROW / 2);
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, row.y, width - GUTTER, ROW);
    ctx.clip();
    let lastPixel = -1;
    for (let i = lowerBound(s, view.t0 - lane.maxDur) * 6; i < s.length && s[i] <= view.t1; i += 6) {
      const start = s[i], dur = s[i + 1];
      if (start + dur < view.t0) continue;
      const x0 = xOf(start, width), x1 = xOf(start + dur, width);
      if (x1 - x0 < 1) {
        // Thinner than a pixel: one mark per pixel column is all the eye can see.
        const px = Math.floor(x0);
        if (px <= lastPixel) continue;
        lastPixel = px;
      } else {
        lastPixel = Math.floor(x1);
      }
      const count = s[i + 4];
      ctx.globalAlpha = count > 1 ? Math.max(0.35, Math.min(1, s[i + 5] / Math.max(1, dur))) : 1;
      ctx.fillStyle = sliceColor(s[i + 3], s[i + 2]);
      ctx.fillRect(x0, row.y + 2, Math.max(1, x1 - x0), ROW - 4);
      ctx.globalAlpha = 1;
      if (x1 - x0 > 48) {
        ctx.fillStyle = '#fff';
        const name = (count > 1 ? count + '× ' : '') + (NAMES[s[i + 2]] || '');
        ctx.fillText(name, Math.max(x0, GUTTER) + 3, row.y + ROW / 2, Math.min(x1, width) - Math.max(x0, GUTTER) - 6);
      }
    }
    ctx.restore();
    ctx.fillStyle = '#f0f2f5';
    ctx.fillRect(0, row.y + ROW - 1, width, 1);
  }
  ctx.fillStyle = '#dde1e8';
  ctx.fillRect(GUTTER - 1, AXIS, 1, canvasHeight - AXIS);
  $('view-range').textContent = 'showing +' + fmtDur(view.t0) + ' to +' + fmtDur(view.t1) +
    ' from the session start (' + fmtDur(view.t1 - view.t0) + ')';
}

function drawUtilization() {
  const U = D.utilization;
  const canvas = $('utilization');
  const height = AXIS + Math.max(1, U.devices.length) * UTIL_ROW + 4;
  const {ctx, width} = setupCanvas(canvas, height);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);
  drawAxis(ctx, width, height);
  const bw = U.bucket_ns;
  U.devices.forEach((d, k) => {
    const y = AXIS + k * UTIL_ROW, h = UTIL_ROW - 8;
    let sum = 0, n = 0;
    ctx.fillStyle = '#2f6db5';
    for (let x = GUTTER; x < width; ++x) {
      const ta = tOf(x, width), tb = tOf(x + 1, width);
      const i0 = Math.max(0, Math.floor(ta / bw)), i1 = Math.min(d.busy.length, Math.ceil(tb / bw));
      let acc = 0, m = 0;
      for (let i = i0; i < Math.max(i1, i0 + 1) && i < d.busy.length; ++i) { acc += d.busy[i]; ++m; }
      if (!m || ta > TL.span_ns || tb < 0) continue;
      const v = acc / m;
      sum += v; ++n;
      ctx.fillRect(x, y + 4 + h * (1 - v), 1, h * v);
    }
    ctx.fillStyle = '#f0f2f5';
    ctx.fillRect(GUTTER, y + 4, width - GUTTER, 1);
    ctx.fillRect(GUTTER, y + 4 + h, width - GUTTER, 1);
    ctx.fillStyle = '#1c2230';
    ctx.font = '600 12px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.fillText('GPU ' + d.device + ' busy', 6, y + UTIL_ROW / 2 - 7);
    ctx.font = '11.5px system-ui, sans-serif';
    ctx.fillStyle = '#5d6677';
    ctx.fillText(n ? fmtPct(sum / n) + ' in view' : '', 6, y + UTIL_ROW / 2 + 8);
  });
  if (!U.devices.length) {
    ctx.fillStyle = '#5d6677';
    ctx.fillText('no GPU work in this trace', GUTTER + 8, AXIS + 14);
  }
}

function redraw() {
  drawTimeline();
  drawUtilization();
}

function clampView(t0, t1) {
  const span = Math.max(1, TL.span_ns), pad = span * 0.02;
  let w = Math.min(Math.max(t1 - t0, 50), span + 2 * pad);
  t0 = Math.max(-pad, Math.min(t0, span + pad - w));
  view.t0 = t0;
  view.t1 = t0 + w;
}

function zoomAround(t, factor) {
  clampView(t - (t - view.t0) * factor, t + (view.t1 - t) * factor);
  redraw();
}

function zoomTo(start, end, scroll) {
  const pad = Math.max(50, (end - start) * 0.1);
  clampView(start - pad, end + pad);
  redraw();
  if (scroll) $('timeline-section').scrollIntoView({behavior: 'smooth'});
}

function sliceAt(x, y) {
  const canvas = $('timeline');
  const width = canvas.clientWidth;
  const row = rows.find((r) => r.lane && y >= r.y && y < r.y + ROW);
  if (!row || x < GUTTER) return null;
  const s = row.lane.slices, t = tOf(x, width), slack = (view.t1 - view.t0) / (width - GUTTER) * 2;
  let best = -1;
  const last = lowerBound(s, t + slack) - 1;
  for (let k = last, seen = 0; k >= 0 && seen < 256; --k, ++seen) {
    const i = k * 6;
    if (s[i] + s[i + 1] + slack >= t) { best = i; break; }
    if (s[i] + row.lane.maxDur < t - slack) break;
  }
  return best < 0 ? null : {lane: row.lane, i: best};
}

function setupTimelineEvents() {
  const canvas = $('timeline'), tip = $('tooltip');
  let drag = null;
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const rect = canvas.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const t = x < GUTTER ? (view.t0 + view.t1) / 2 : tOf(x, rect.width);
    zoomAround(t, Math.exp(Math.max(-1, Math.min(1, e.deltaY * 0.002))));
  }, {passive: false});
  canvas.addEventListener('mousedown', (e) => {
    drag = {x: e.clientX, t0: view.t0, t1: view.t1};
    canvas.classList.add('dragging');
  });
  window.addEventListener('mouseup', () => { drag = null; canvas.classList.remove('dragging'); });
  window.addEventListener('mousemove', (e) => {
    const rect = canvas.getBoundingClientRect();
    if (drag) {
      const dt = (e.clientX - drag.x) / (rect.width - GUTTER) * (drag.t1 - drag.t0);
      clampView(drag.t0 - dt, drag.t1 - dt);
      redraw();
      tip.style.display = 'none';
      return;
    }
    const x = e.clientX - rect.left, y = e.clientY - rect.top;
    const hit = x >= 0 && y >= 0 && x < rect.width && y < rect.height ? sliceAt(x, y) : null;
    if (!hit) { tip.style.display = 'none'; return; }
    const s = hit.lane.slices, i = hit.i;
    const lines = [NAMES[s[i + 2]] || '?', (CATEGORIES[s[i + 3]] || ['?'])[0] + ' · ' + hit.lane.group + ' · ' +
      hit.lane.label,
      'start ' + fmtDur(s[i]) + ', duration ' + fmtDur(s[i + 1])];
    if (s[i + 4] > 1) lines.push(fmtInt(s[i + 4]) + ' recorded slices merged here, busy ' + fmtDur(s[i + 5]) +
      ' of ' + fmtDur(s[i + 1]) + ' (the name shown is the one with the most time)');
    tip.textContent = lines.join('\n');
    tip.style.display = 'block';
    tip.style.left = Math.min(x + 14, rect.width - 380) + 'px';
    tip.style.top = (y + 14) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  canvas.addEventListener('dblclick', () => { clampView(0, TL.span_ns); redraw(); });
  $('zoom-in').addEventListener('click', () => zoomAround((view.t0 + view.t1) / 2, 0.5));
  $('zoom-out').addEventListener('click', () => zoomAround((view.t0 + view.t1) / 2, 2));
  $('zoom-reset').addEventListener('click', () => { clampView(0, TL.span_ns); redraw(); });
  $('pan-left').addEventListener('click', () => { const w = view.t1 - view.t0; clampView(view.t0 - w / 3,
    view.t1 - w / 3); redraw(); });
  $('pan-right').addEventListener('click', () => { const w = view.t1 - view.t0; clampView(view.t0 + w / 3, view.t1 +
    w / 3); redraw(); });
  let pending = 0;
  window.addEventListener('resize', () => { clearTimeout(pending); pending = setTimeout(redraw, 100); });
}

function renderTimeline() {
  if (!D.timeline) { $('timeline-section').hidden = true; return; }
  layout();
  clampView(0, TL.span_ns);
  const note = $('timeline-note');
  const merged = TL.lanes.filter((l) => l.merged).length;
  note.textContent = lanes.length
    ? fmtInt(TL.drawn_slices) + ' slices drawn for ' + fmtInt(TL.recorded_slices) + ' recorded in ' + lanes.length +
      ' lanes. ' +
      (merged ? 'In ' + merged + ' busy lane' + (merged > 1 ? 's' : '') + ', recorded slices shorter than ' +
        fmtDur(TL.bucket_ns) +
        ' that start in the same ' + fmtDur(TL.bucket_ns) +
          ' stretch are merged into one slice, shaded by how busy the stretch was; ' +
        'hovering it tells how many it stands for. '
        : 'Every recorded slice is drawn. ') +
      'Utilization: busy share of each of ' +
        fmtInt(D.utilization.devices.length ? D.utilization.devices[0].busy.length : 0) +
      ' equal stretches of the span (' + fmtDur(D.utilization.bucket_ns) + ' each).'
    : 'The trace holds no GPU work and no CUDA calls.';
  const legend = $('legend');
  const used = new Set();
  for (const l of TL.lanes) for (let i = 3; i < l.slices.length; i += 6) used.add(l.slices[i]);
  CATEGORIES.forEach(([name, color], c) => {
    if (!used.has(c)) return;
    const sw = el('i');
    sw.style.background = color || 'linear-gradient(90deg, hsl(10,58%,52%), hsl(130,58%,52%), hsl(250,58%,52%))';
    legend.appendChild(el('span', {}, sw, c === 0 ? 'kernel (colour by name)' : name));
  });
  setupTimelineEvents();
  redraw();
}

// ---- Roofline (log-log SVG).
function renderRoofline() {
  if (!D.roofline) { $('roofline-section').hidden = true; return; }
  const R = D.roofline, box = $('roofline');
  const points = R.points;
  const device = D.devices.find((d) => points.length ? d.id === points[0].device : d.peak_dram_bytes_per_second > 0) ||
    D.devices[0];
  if (!points.length) {
    box.appendChild(el('p', {class: 'note', text: D.kernel_verdicts.length
      ? 'None of the profiled kernels has the roofline metrics (FLOP counts and DRAM bytes): ' +
        'profile with --metrics roofline.'
      : 'No kernel in this trace has metric rows: profile with `cuscope profile --metrics roofline` ' +
        '(or sol,roofline) to place kernels on the roofline.'}));
  }
  // No chart without a point on it: roofs alone say nothing about this program.
  if (points.length && (!device || !(device.peak_dram_bytes_per_second > 0))) {
    box.appendChild(el('p', {class: 'note', text: 'The trace header has no device peaks: the roofs cannot be drawn.'}));
  } else if (points.length) {
    box.appendChild(rooflineChart(device, points));
  }
  if (points.length) {
    const rows = points.map((p, i) => el('tr', {}, el('td', {class: 'num', text: String(i + 1)}), el('td',
      {class: 'name', text: p.label}),
      el('td', {text: p.precision}), el('td', {class: 'num', text: p.intensity.toPrecision(3)}),
      el('td', {class: 'num', text: fmtSi(p.flop_per_second, 'FLOP/s')}),
      el('td', {class: 'num', text: p.roof_pct === null ? '-' : p.roof_pct.toFixed(1) + '%'}),
      el('td', {class: 'num', text: fmtDur(p.gpu_time_ns)}), el('td', {text: p.bottleneck})));
    box.appendChild(el('table', {id: 'roofline-points'}, el('thead', {}, el('tr', {}, ['#', 'kernel', 'precision',
      'FLOP/byte',
      'achieved', 'of roof', 'GPU time', 'verdict'].map((h, i) => el('th', {class: [0, 3, 4, 5,
        6].includes(i) ? 'num' : null, text: h})))),
      el('tbody', {}, rows)));
  }
  const nm = $('not-measured');
  if (R.not_measured.length) {
    nm.appendChild(el('h3', {text: 'Not measured'}));
    nm.appendChild(el('ul', {}, R.not_measured.map((k) => el('li', {}, el('span', {class: 'name', text: k.label}),
      ' — ' + k.why + (k.time_ns ? ' (' + fmtInt(k.count) + '×, ' + fmtDur(k.time_ns) + ')' : '')))));
    if (R.not_measured_more) nm.appendChild(el('p', {class: 'note', text: 'and ' + R.not_measured_more +
      ' more kernels without metric rows'}));
  }
  const vbox = $('verdicts');
  if (D.kernel_verdicts.length) vbox.appendChild(el('h3', {text: 'Kernel verdicts'}));
  for (const v of D.kernel_verdicts) {
    vbox.appendChild(el('div', {class: 'verdict'},
      el('p', {}, el('span', {class: 'bn', text: v.bottleneck}), ' · ', el('span', {class: 'name', text: v.label}),
        v.grid ? ' [grid ' + v.grid + ', block ' + v.block + ']' : '', ' · ' + fmtDur(v.gpu_time_ns) + ', ' +
          fmtPct(v.kernel_time_share) + ' of kernel time'),
      el('p', {class: 'note', text: v.reason}),
      v.occupancy_note ? el('p', {class: 'note', text: 'occupancy: ' + v.occupancy_note}) : null,
      v.stall_note ? el('p', {class: 'note', text: 'stalls: ' + v.stall_note}) : null,
      el('p', {}, el('strong', {text: 'Advice: '}), v.recommendation)));
  }
}

// A power of ten as an axis label: "0.01", "100", "10 T".
function fmtDecade(v) {
  const prefixes = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
  let i = 0;
  while (v >= 1000 && i < prefixes.length - 1) { v /= 1000; ++i; }
  return String(Number(v.toPrecision(3))) + (i ? ' ' + prefixes[i] : '');
}

function rooflineChart(device, points) {
  const W = 780, H = 440, m = {l: 64, r: 170, t: 16, b: 46};
  const B = device.peak_dram_bytes_per_second;
  const roofs = [
    ['FP32', device.peak_fp32_flops, '#1d3557', ''], ['FP16 tensor', device.peak_fp16_tensor_flops, '#e63946', ''],
    ['FP64', device.peak_fp64_flops, '#6c757d', '5,4'], ['FP16', device.peak_fp16_flops, '#f4a261', '5,4'],
  ].filter((r) => r[1] > 0);
  const peakMax = Math.max(...roofs.map((r) => r[1]), 1);
  const ridgeMax = Math.max(...roofs.map((r) => r[1] / B), 1);
  const intensities = points.map((p) => p.intensity), flops = points.map((p) => p.flop_per_second);
  const xMin = Math.pow(10, Math.floor(Math.log10(Math.min(0.1, ...intensities.map((v) => v / 2)))));
  const xMax = Math.pow(10, Math.ceil(Math.log10(Math.max(ridgeMax * 4, ...intensities.map((v) => v * 2)))));
  const yMax = Math.pow(10, Math.ceil(Math.log10(peakMax * 1.5)));
  const yMin = Math.max(yMax / 1e9, Math.pow(10, Math.floor(Math.log10(Math.min(B * xMin,
    ...flops.map((v) => v / 2))))));
  const lx = (v) => m.l + (Math.log10(v) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin)) * (W - m.l - m.r);
  const ly = (v) => H - m.b - (Math.log10(Math.max(v,
    yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin)) * (H - m.t - m.b);
  const root = svg('svg', {id: 'roofline-chart', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img'});
  root.appendChild(svg('title', {}, 'Roofline of ' + device.name));
  root.appendChild(svg('rect', {x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: '#fbfcfd',
    stroke: '#dde1e8'}));
  for (let e = Math.log10(xMin); e <= Math.log10(xMax) + 1e-9; ++e) {
    const x = lx(Math.pow(10, e));
    root.appendChild(svg('line', {x1: x, y1: m.t, x2: x, y2: H - m.b, stroke: '#e9ecf1'}));
    root.appendChild(svg('text', {x: x, y: H - m.b + 15, 'text-anchor': 'middle'}, fmtDecade(Math.pow(10, e))));
  }
  for (let e = Math.log10(yMin); e <= Math.log10(yMax) + 1e-9; ++e) {
    const y = ly(Math.pow(10, e));
    root.appendChild(svg('line', {x1: m.l, y1: y, x2: W - m.r, y2: y, stroke: '#e9ecf1'}));
    root.appendChild(svg('text', {x: m.l - 6, y: y + 4, 'text-anchor': 'end'}, fmtDecade(Math.pow(10, e))));
  }
  root.appendChild(svg('text', {x: (m.l + W - m.r) / 2, y: H - 8, 'text-anchor': 'middle'},
    'arithmetic intensity, FLOP per DRAM byte (log)'));
  root.appendChild(svg('text', {x: 14, y: (m.t + H - m.b) / 2, 'text-anchor': 'middle',
    transform: 'rotate(-90 14 ' + (m.t + H - m.b) / 2 + ')'}, 'achieved FLOP/s (log)'));
  // Roof labels sit at the right edge; nudge apart labels of roofs closer than a line of text.
  const labelShift = roofs.map(() => 0);
  const order = roofs.map((r, k) => k).sort((a, b) => roofs[b][1] - roofs[a][1]);
  for (let j = 1; j < order.length; ++j) {
    const above = ly(roofs[order[j - 1]][1]) + labelShift[order[j - 1]], here = ly(roofs[order[j]][1]);
    if (here - above < 13) labelShift[order[j]] = above + 13 - here;
  }
  // The memory roof: DRAM bandwidth x intensity, up to where the highest compute roof takes over.
  const topRidge = Math.min(xMax, peakMax / B);
  root.appendChild(svg('line', {x1: lx(xMin), y1: ly(B * xMin), x2: lx(topRidge), y2: ly(B * topRidge),
    stroke: '#34495e',
    'stroke-width': 2}));
  // Each compute roof from its ridge point on.
  roofs.forEach(([name, peak, color, dash], k) => {
    const ridge = Math.min(xMax, peak / B);
    root.appendChild(svg('line', {x1: lx(ridge), y1: ly(peak), x2: lx(xMax), y2: ly(peak), stroke: color,
      'stroke-width': dash ? 1.2 : 2, 'stroke-dasharray': dash}));
    root.appendChild(svg('text', {x: W - m.r + 6, y: ly(peak) + 4 + labelShift[k]}, name + ' ' + fmtSi(peak,
      'FLOP/s')));
  });
  const slopeY = ly(B * xMin * 3);
  root.appendChild(svg('text', {x: lx(xMin * 3) + 4, y: slopeY - 6,
    transform: 'rotate(' + (-Math.atan2(ly(B * xMin) - ly(B * xMin * 10), lx(xMin * 10) - lx(xMin)) * 180 / Math.PI) +
      ' ' + (lx(xMin * 3) + 4) + ' ' + (slopeY - 6) + ')'},
    'DRAM ' + fmtSi(B, 'B/s')));
  const colors = {'compute-bound': '#e63946', 'memory-bound': '#2a9d8f', 'latency-bound': '#f4a261',
    'mixed': '#6d597a', 'undetermined': '#8d99ae'};
  points.forEach((p, i) => {
    const cx = lx(p.intensity), cy = ly(p.flop_per_second);
    const g = svg('g', {class: 'roof-point'});
    g.appendChild(svg('circle', {cx, cy, r: 5 + 9 * Math.sqrt(Math.max(0, p.kernel_time_share)),
      fill: colors[p.bottleneck] || '#457b9d',
      'fill-opacity': 0.75, stroke: '#1c2230', 'stroke-width': 0.8}));
    g.appendChild(svg('text', {x: cx + 9, y: cy - 7}, String(i + 1)));
    g.appendChild(svg('title', {}, p.label + '\n' + p.intensity.toPrecision(3) + ' FLOP/B, ' +
      fmtSi(p.flop_per_second, 'FLOP/s') +
      (p.roof_pct === null ? '' : ', ' + p.roof_pct.toFixed(1) + '% of the roof') + ', ' + fmtDur(p.gpu_time_ns) +
        ' (' + p.bottleneck + ')'));
    root.appendChild(g);
  });
  return root;
}

// ---- The ranks side by side (a rank set's page): per rank its median step and the GPU work in it,
// its communication split into exposed and overlapped, and how often and by how much it was the last
// to arrive at a collective. Bars share one scale per column; the ranks the findings name are marked.
function renderRanks() {
  if (!RANK_SET) return;
  $('ranks-section').hidden = false;
  const R = D.ranks, box = $('ranks');
  const named = new Set();
  for (const f of D.findings) {
    // A trace without a rank says -1 here: it is named in the headline only.
    for (const n of f.numbers) if (n.key === 'rank' && Number(n.value) >= 0) named.add(Number(n.value));
  }
  let maxStep = 0, maxComm = 0, maxLate = 0;
  for (const r of R.rows) {
    maxStep = Math.max(maxStep, r.step_median_ns);
    maxComm = Math.max(maxComm, r.communication_ns);
    maxLate = Math.max(maxLate, r.late_ns);
  }
  const WIDTH = 160;
  const bar = (parts, max) => el('div', {class: 'rank-bar', style: 'width:' + WIDTH + 'px'},
    parts.map(([value, cls, title]) => el('i', {class: cls, title,
      style: 'width:' + (max > 0 ? Math.max(0, WIDTH * value / max) : 0).toFixed(1) + 'px'})));
  const steps = R.step_name !== '';
  const head = el('tr', {}, el('th', {text: 'rank'}), el('th', {text: 'host'}),
    steps ? el('th', {text: 'median \'' + R.step_name + '\' step (GPU work | rest)'}) : null,
    el('th', {text: 'communication (exposed | overlapped by compute)'}),
    el('th', {text: 'last to arrive at a collective'}));
  const body = el('tbody');
  const addRows = (from, to) => {
    for (let i = from; i < to; ++i) {
      const r = R.rows[i];
      const work = Math.min(r.step_work_median_ns, r.step_median_ns);
      body.appendChild(el('tr', {class: r.rank >= 0 && named.has(r.rank) ? 'named-rank' : null},
        el('td', {class: 'name', text: r.label, title: r.path + (r.clock_aligned ? '' : ' (no clock reference)')}),
        el('td', {class: 'name', text: r.host}),
        steps ? el('td', {}, bar([[work, 'work', 'GPU work ' + fmtDur(work)],
          [r.step_median_ns - work, 'rest', 'rest of the step ' + fmtDur(r.step_median_ns - work)]], maxStep),
        el('span', {class: 'note', text: ' ' + fmtDur(r.step_median_ns) + ' (' + fmtDur(work) + ' work)'})) : null,
        el('td', {}, bar([[r.exposed_ns, 'exposed', 'exposed ' + fmtDur(r.exposed_ns)],
          [r.overlapped_ns, 'overlapped', 'overlapped ' + fmtDur(r.overlapped_ns)]], maxComm),
        el('span', {class: 'note', text: ' ' + fmtDur(r.communication_ns) + ' (' + fmtDur(r.exposed_ns) +
          ' exposed)'})),
        el('td', {}, bar([[r.late_ns, 'late', 'later than the others by ' + fmtDur(r.late_ns) + ' in all']], maxLate),
          el('span', {class: 'note', text: ' ' + fmtInt(r.last_arrivals) + '× of ' + fmtInt(R.matched_instances) +
            (r.late_ns ? ', ' + fmtDur(r.late_ns) + ' late in all' : '')}))));
    }
  };
  const SHOWN = 64;
  addRows(0, Math.min(SHOWN, R.rows.length));
  box.appendChild(el('div', {class: 'table-block'}, el('table', {id: 'rank-chart'}, el('thead', {}, head), body)));
  if (R.rows.length > SHOWN) {
    const more = el('button', {text: 'show all ' + R.rows.length + ' ranks'});
    more.addEventListener('click', () => { addRows(SHOWN, R.rows.length); more.remove(); });
    box.appendChild(more);
  }
}

// ---- Summary tables.
function formatCell(value, type) {
  if (type === 'text') return value;
  if (value === '') return '-';
  const v = Number(value);
  if (!isFinite(v)) return value;
  if (type === 'integer') return fmtInt(v);
  if (type === 'percent') return v.toFixed(1);
  return v.toLocaleString('en-US', {minimumFractionDigits: 1, maximumFractionDigits: 1});
}

// Text holding a long run of characters without a space (a kernel's name, a template's arguments,
// a path) may break anywhere, or it would widen its table past the page; other text (a verdict, a
// cause) wraps between words only.
function textClass(cell) {
  return typeof cell === 'string' && /\S{25}/.test(cell) ? 'name' : 'text';
}

function renderTables() {
  const box = $('tables');
  const SHOWN = 15;
  for (const t of D.tables) {
    const head = el('tr', {}, t.columns.map((c) => el('th', {class: c.type === 'text' ? null : 'num', text: c.name})));
    const body = el('tbody');
    const addRows = (from, to) => {
      for (let r = from; r < to; ++r) {
        body.appendChild(el('tr', {}, t.rows[r].map((cell, c) => {
          const type = (t.columns[c] || {type: 'text'}).type;
          return el('td', {class: type === 'text' ? textClass(cell) : 'num', text: formatCell(cell, type)});
        })));
      }
    };
    addRows(0, Math.min(SHOWN, t.rows.length));
    const block = el('div', {class: 'table-block', id: 'table-' + t.name}, el('h3', {}, t.title + ' ', el('code',
      {text: t.name})),
      el('table', {}, el('thead', {}, head), body));
    if (t.rows.length > SHOWN) {
      const more = el('button', {text: 'show all ' + t.rows.length + ' rows'});
      more.addEventListener('click', () => { addRows(SHOWN, t.rows.length); more.remove(); });
      block.appendChild(more);
    }
    if (t.total_rows > t.rows.length) {
      block.appendChild(el('p', {class: 'note', text: 'The report embeds the first ' + t.rows.length + ' of ' +
        t.total_rows +
        ' rows; cuscope stats --report ' + t.name + ' prints them all.'}));
    }
    if (!t.rows.length) block.appendChild(el('p', {class: 'note', text: 'no rows'}));
    box.appendChild(block);
  }
}

// An icicle chart: the root on top, each call path's frames below it, widths by GPU time. Nodes
// narrower than a pixel's worth are left out (their time stays in their parent's width).
function renderFlame() {
  const root = D.call_paths;
  if (!root || !root.time_ns) return;
  $('flame-section').hidden = false;
  const box = $('flame');
  const rowHeight = 18;
  let depth = 0;
  const place = (node, left, width, level) => {
    if (width < 0.1) return;
    depth = Math.max(depth, level + 1);
    const share = node.time_ns / root.time_ns;
    box.appendChild(el('div', {
      class: 'flame-node',
      style: 'left:' + left + '%;width:' + width + '%;top:' + (level * rowHeight) + 'px;background:hsl(' +
        hashHue(node.name) + ',60%,72%)',
      title: node.name + '\n' + fmtDur(node.time_ns) + ' of GPU time (' + (100 * share).toFixed(1) + '%), ' +
        fmtNumber(node.launches) + ' launches',
      text: node.name,
    }));
    let at = left;
    for (const child of node.children || []) {
      const w = width * child.time_ns / node.time_ns;
      place(child, at, w, level + 1);
      at += w;
    }
  };
  place(root, 0, 100, 0);
  box.style.height = (depth * rowHeight) + 'px';
}

for (const [name, fn] of [['overview', renderOverview], ['findings', renderFindings], ['ranks', renderRanks],
  ['timeline', renderTimeline],
  ['roofline', renderRoofline], ['flame', renderFlame], ['tables', renderTables]]) {
  try {
    fn();
  } catch (e) {
    window.cuscopeRecordError('rendering ' + name + ' failed: ' + (e && e.stack ? e.stack : e));
  }
}
document.body.dataset.rendered = window.cuscopeErrors.length ? 'error' : 'ok';
})();
