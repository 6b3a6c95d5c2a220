// @ts-check
// The log explorer's histogram: events over time by level, dragged across to zoom in; it follows
// a live tail.
import { api, sentence } from './api.js';
import { h, when, errorBox, empty } from './ui.js';
import { LEVELS, windowOf } from './logs-search.js';

export async function histogram(state, body) {
  const box = document.getElementById('histogram');
  /** @type {import('./types.js').Counts} */
  let c;
  try {
    c = await api('POST', '/logs/counts', { json: { ...body, interval: 'auto' } });
  } catch (err) {
    box.replaceChildren(errorBox(sentence(err)));
    return;
  }
  if (!state.view) return;
  document.getElementById('total').textContent =
    `${c.total.toLocaleString()} event${c.total === 1 ? '' : 's'} · ${c.interval} buckets`;
  if (c.total === 0) {
    box.replaceChildren(
      empty('No events in this range.', 'Widen the time range or clear filters.'),
    );
    return;
  }
  const W = 1000;
  const H = 160;
  const n = c.buckets.length;
  const bw = W / n;
  const max = Math.max(1, ...c.buckets.map((b) => b.total));
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `Histogram of ${c.total} events by level`);
  c.buckets.forEach((b, i) => {
    let y = H;
    for (const l of LEVELS) {
      const v = b.levels[l];
      if (!v) continue;
      const bh = (v / max) * (H - 4);
      const r = document.createElementNS(ns, 'rect');
      r.setAttribute('x', String(i * bw + 0.5));
      r.setAttribute('width', String(Math.max(bw - 1, 0.5)));
      r.setAttribute('y', String(y - bh));
      r.setAttribute('height', String(bh));
      r.setAttribute('class', `bar ${l}`);
      r.dataset.bucket = String(i);
      r.dataset.level = l;
      r.dataset.count = String(v);
      const t = document.createElementNS(ns, 'title');
      t.textContent = `${when(b.start)}: ${b.total} events (${LEVELS.filter((x) => b.levels[x])
        .map((x) => `${b.levels[x]} ${x}`)
        .join(', ')})`;
      r.append(t);
      svg.append(r);
      y -= bh;
    }
  });
  const sel = document.createElementNS(ns, 'rect');
  sel.setAttribute('class', 'selection');
  sel.setAttribute('y', '0');
  sel.setAttribute('height', String(H));
  sel.setAttribute('width', '0');
  svg.append(sel);
  const bucketAt = (e) => {
    const r = svg.getBoundingClientRect();
    return Math.min(n - 1, Math.max(0, Math.floor(((e.clientX - r.left) / r.width) * n)));
  };
  let start = null;
  svg.addEventListener('pointerdown', (e) => {
    start = bucketAt(e);
    try {
      svg.setPointerCapture(e.pointerId);
    } catch {
      /* not a live pointer */
    }
  });
  svg.addEventListener('pointermove', (e) => {
    if (start === null) return;
    const a = Math.min(start, bucketAt(e));
    const b = Math.max(start, bucketAt(e));
    sel.setAttribute('x', String(a * bw));
    sel.setAttribute('width', String((b - a + 1) * bw));
  });
  svg.addEventListener('pointerup', (e) => {
    if (start === null) return;
    const a = Math.min(start, bucketAt(e));
    const b = Math.max(start, bucketAt(e));
    start = null;
    const from = new Date(Math.max(Date.parse(c.buckets[a].start), Date.parse(c.range.from)));
    const to = new Date(
      Math.min(Date.parse(c.buckets[b].start) + c.intervalSeconds * 1000, Date.parse(c.range.to)),
    );
    const next = new URLSearchParams(state.view.params);
    next.set('range', 'custom');
    next.set('from', from.toISOString());
    next.set('to', to.toISOString());
    state.view.navigate(`/logs?${next}`);
  });
  const scale = h(
    'div',
    { class: 'scale muted small', 'aria-hidden': 'true' },
    h('span', {}, max.toLocaleString()),
    h('span', {}, '0'),
  );
  box.replaceChildren(h('div', { class: 'plot' }, scale, svg), axis(c));
}

/** Ticks under the histogram: hours (or minutes) within a day, days over longer ranges. */
export function axis(c) {
  const from = Date.parse(c.range.from);
  const to = Date.parse(c.range.to);
  const span = Math.max(1, to - from);
  const MIN = 60000;
  const steps = [5, 15, 30, 60, 180, 360, 720, 1440, 2880, 10080].map((m) => m * MIN);
  // at most about eight ticks, on local clock boundaries
  const step = steps.find((s) => span / s <= 8) || steps[steps.length - 1];
  const days = step >= 1440 * MIN;
  const first = new Date(from);
  if (days) first.setHours(0, 0, 0, 0);
  else first.setMinutes((Math.floor(first.getMinutes() / (step / MIN)) * (step / MIN)) % 60, 0, 0);
  const ticks = [];
  for (let t = first.getTime(); t <= to; t += step) {
    if (t < from) continue;
    const d = new Date(t);
    const label = days
      ? d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })
      : d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
    const tick = h('span', { class: 'tick', title: when(d.toISOString()) }, label);
    // CSSOM, not a style attribute: the console's CSP allows no inline styles
    tick.style.left = `${((t - from) / span) * 100}%`;
    ticks.push(tick);
  }
  return h(
    'div',
    {
      class: 'axis muted small',
      'aria-label': `From ${when(c.range.from)} to ${when(c.range.to)}`,
    },
    ticks,
  );
}

/** While a live tail runs, the histogram follows it (at most every five seconds). */
export function refreshHistogram(state) {
  if (!state.view || state.view.histogramTimer) return;
  state.view.histogramTimer = setTimeout(() => {
    if (!state.view) return;
    state.view.histogramTimer = null;
    const params = state.view.params;
    // a preset range moves with the clock; a custom one stays as chosen
    const win = params.get('range') === 'custom' ? {} : windowOf(params);
    histogram(state, { ...state.view.body, ...win });
  }, 5000);
}
