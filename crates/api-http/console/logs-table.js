// @ts-check
// The log explorer's results: the table of events and "Load more".
import { api, sentence, retryable } from './api.js';
import { h, toast, when, shortTime, errorBox, empty } from './ui.js';
import { playerLink } from './players.js';
import { showEvent } from './logs-detail.js';

export function eventRow(state, e, fresh) {
  return h(
    'tr',
    {
      class: fresh ? 'fresh' : '',
      tabindex: '0',
      onclick: () => showEvent(state, e),
      onkeydown: (k) => {
        if (k.key === 'Enter') showEvent(state, e);
      },
    },
    h('td', { class: 'nowrap', title: when(e.occurred_at) }, shortTime(e.occurred_at)),
    h('td', {}, h('span', { class: `lvl ${e.level}` }, e.level)),
    h('td', { class: 'hide-narrow' }, e.event_type || ''),
    h('td', { class: 'hide-narrow' }, e.resource || ''),
    h(
      'td',
      { class: 'hide-narrow', onclick: (ev) => ev.stopPropagation() },
      e.player_id ? playerLink(e.player_id) : '',
    ),
    h('td', { class: 'msg' }, e.message || ''),
  );
}

export function table() {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'events' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'Time'),
          h('th', {}, 'Level'),
          h('th', { class: 'hide-narrow' }, 'Type'),
          h('th', { class: 'hide-narrow' }, 'Resource'),
          h('th', { class: 'hide-narrow' }, 'Player'),
          h('th', {}, 'Message'),
        ),
      ),
      h('tbody', { id: 'event-rows' }),
    ),
  );
}

export async function results(state, body, more) {
  const box = document.getElementById('results');
  /** @type {import('./types.js').EventPage} */
  let page;
  try {
    page = await api('POST', '/logs/search', {
      json: { ...body, limit: 100, cursor: more ? state.view.cursor : undefined },
    });
  } catch (err) {
    const stale = err.code === 'CURSOR_EXPIRED' || err.code === 'INVALID_CURSOR';
    if (stale) {
      // "Load more" of a search kept too long: the rows stay, the search starts again from
      // its newest events on request
      box.querySelector('.more')?.remove();
      box.append(
        errorBox(
          sentence(err),
          () => state.view && state.view.navigate(location.pathname + location.search),
          'Search again',
        ),
      );
    } else if (!more) {
      box.replaceChildren(
        errorBox(sentence(err), retryable(err) ? () => results(state, body, false) : undefined),
      );
    } else toast(sentence(err), 'error');
    return;
  }
  if (!state.view) return;
  if (!more) {
    if (page.events.length === 0) {
      box.replaceChildren(
        empty(
          'No events match this search.',
          'Widen the time range, clear a filter, or start the live tail to watch new events arrive.',
        ),
        table(),
      );
      box.querySelector('table').hidden = true;
      return;
    }
    box.replaceChildren(table());
  }
  const rows = document.getElementById('event-rows');
  for (const e of page.events) rows.append(eventRow(state, e, false));
  state.view.cursor = page.pagination.nextCursor;
  box.querySelector('.more')?.remove();
  if (page.pagination.hasMore)
    box.append(
      h(
        'button',
        { type: 'button', class: 'more', onclick: () => results(state, body, true) },
        'Load more',
      ),
    );
}
