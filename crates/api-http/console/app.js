// @ts-check
// The console's shell: session, sign-in, navigation. Each view renders from the URL alone, so a
// link shares it and the back button works.
import { api, session, signIn, signOut, sentence } from './api.js';
import { h, errorBox, field } from './ui.js';
import { overviewView } from './overview.js';
import { filesView } from './objects.js';
import { logsView } from './logs.js';

/** Each page's view, made anew for every visit: `render(root, ctx)`, then `leave()`. */
const views = { '/overview': overviewView, '/objects': filesView, '/logs': logsView };
const main = () => document.getElementById('main');
/** @type {import('./types.js').Whoami | null} */
let me = null;
let current = null;

export function navigate(url, { replace = false } = {}) {
  history[replace ? 'replaceState' : 'pushState'](null, '', url);
  route();
}

function signInPage(message) {
  document.getElementById('nav').hidden = true;
  document.getElementById('signout').hidden = true;
  document.getElementById('who').textContent = '';
  document.title = 'Sign in · Stowage console';
  const key = h('input', {
    type: 'password',
    name: 'key',
    autocomplete: 'off',
    required: true,
    spellcheck: 'false',
    placeholder: 'stw_dev_… or stw_srv_…',
  });
  const problem = h('div', { class: 'form-error', role: 'alert' });
  if (message) problem.append(h('p', {}, message));
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (e) => {
        e.preventDefault();
        problem.replaceChildren();
        const button = form.querySelector('button');
        button.disabled = true;
        try {
          await signIn(key.value);
          key.value = '';
          me = null;
          route();
        } catch (err) {
          problem.append(
            h(
              'p',
              {},
              err.status === 401
                ? 'That key was not accepted: it is unknown, disabled or expired. Check it, or ask the organization owner for a new one.'
                : sentence(err),
            ),
          );
          button.disabled = false;
          key.focus();
        }
      },
    },
    h('h1', {}, 'Sign in to Stowage'),
    h(
      'p',
      { class: 'muted' },
      'Paste an API key. It is exchanged for a session and not kept by your browser; ' +
        "what you see and do is limited to that key's permissions and paths.",
    ),
    field('API key', key),
    problem,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  main().replaceChildren(form);
  key.focus();
}

async function route() {
  if (current && current.leave) current.leave();
  current = null;
  let s;
  try {
    s = await session();
  } catch {
    s = null;
  }
  if (!s) return signInPage();
  if (!me) {
    try {
      me = await api('GET', '/whoami');
    } catch (err) {
      if (err.status === 401) return signInPage();
      main().replaceChildren(errorBox(sentence(err), route));
      return;
    }
  }
  document.getElementById('nav').hidden = false;
  document.getElementById('signout').hidden = false;
  document.getElementById('who').textContent = `${me.organization.name} · ${me.name || me.keyId}`;
  let path = location.pathname;
  if (path === '/' || path === '') {
    path = '/overview';
    history.replaceState(null, '', '/overview');
  }
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.getAttribute('href') === path) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const make = views[path];
  const root = main();
  root.replaceChildren();
  if (!make) {
    root.append(
      h(
        'div',
        { class: 'empty' },
        h('p', { class: 'empty-title' }, 'No such page.'),
        h('p', {}, h('a', { href: '/overview', 'data-link': true }, 'Go to the overview')),
      ),
    );
    return;
  }
  const view = make();
  current = view;
  try {
    await view.render(root, { me, params: new URLSearchParams(location.search), navigate });
  } catch (err) {
    root.append(errorBox(sentence(err), route));
  }
}

document.addEventListener('click', (e) => {
  const a = /** @type {Element} */ (e.target).closest('a[data-link]');
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', route);
window.addEventListener('stowage:signed-out', () => {
  me = null;
  signInPage('Your session has ended. Sign in again.');
});
document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('signout').addEventListener('click', async () => {
    await signOut();
    me = null;
    navigate('/overview', { replace: true });
  });
  route();
});
