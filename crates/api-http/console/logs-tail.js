// @ts-check
// The log explorer's live tail (Server-Sent Events from /v1/logs/tail): new events on top, the
// histogram following.
import { query } from './api.js';
import { toast } from './ui.js';
import { refreshHistogram } from './logs-histogram.js';
import { flatSearch } from './logs-search.js';
import { eventRow, table } from './logs-table.js';

export function toggleTail(state) {
  const button = document.getElementById('tail-toggle');
  const status = document.getElementById('tail-state');
  if (state.view.tail) {
    state.view.tail.close();
    state.view.tail = null;
    button.textContent = 'Resume tail';
    status.textContent = 'Paused.';
    return;
  }
  const params = { ...flatSearch(state.view.params), lastEventId: state.view.lastId };
  const source = new EventSource(`/api/v1/logs/tail${query(params)}`);
  state.view.tail = source;
  button.textContent = 'Pause tail';
  status.textContent = 'Connecting…';
  source.addEventListener('open', () => {
    status.textContent = 'Live: new events appear at the top.';
  });
  source.addEventListener('log', (m) => {
    state.view.lastId = m.lastEventId;
    const e = JSON.parse(m.data);
    let rows = document.getElementById('event-rows');
    if (!rows) {
      document.getElementById('results').replaceChildren(table());
      rows = document.getElementById('event-rows');
    }
    rows.closest('table').hidden = false;
    document.querySelector('#results .empty')?.remove();
    rows.prepend(eventRow(state, e, true));
    refreshHistogram(state);
  });
  source.addEventListener('gap', () =>
    toast(
      'Some events may have been missed while the tail was paused; search the range to see them.',
    ),
  );
  source.addEventListener('end', () => {
    source.close();
    state.view.tail = null;
    button.textContent = 'Live tail';
    status.textContent = 'The tail ended: the key can no longer read logs.';
  });
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED) {
      state.view.tail = null;
      button.textContent = 'Live tail';
      status.textContent =
        'The tail could not start (too many tails open, or the session ended). Try again in a few seconds.';
    } else status.textContent = 'Reconnecting…';
  });
}
