// @ts-check
// The console's shell: session, sign-in, navigation. Each view renders from the URL alone, so a
// link shares it and the back button works.
import {
  api,
  session,
  signIn,
  signOut,
  sentence,
  consolePost,
  setMemberSession,
  retryable,
} from './api.js';
import { h, errorBox, field } from './ui.js';
import { overviewView } from './overview.js';
import { filesView } from './objects.js';
import { logsView } from './logs.js';
import { membersView } from './members.js';
import { keysView } from './keys.js';
import { auditView } from './audit.js';
import { playersView } from './players.js';
import { accountView } from './account.js';
import { alertsView } from './alerts.js';

/** Each page's view, made anew for every visit: `render(root, ctx)`, then `leave()`. */
const views = {
  '/overview': overviewView,
  '/objects': filesView,
  '/logs': logsView,
  '/alerts': alertsView,
  '/members': membersView,
  '/keys': keysView,
  '/audit': auditView,
  '/account': accountView,
};
const main = () => document.getElementById('main');
/** @type {import('./types.js').Whoami | null} */
let me = null;
let current = null;

export function navigate(url, { replace = false } = {}) {
  history[replace ? 'replaceState' : 'pushState'](null, '', url);
  route();
}

function signedOutShell(title) {
  document.getElementById('nav').hidden = true;
  document.getElementById('signout').hidden = true;
  document.getElementById('who').textContent = '';
  document.getElementById('org-switch')?.remove();
  document.title = `${title} · Stowage console`;
}

/** What a refused sign-in should say. */
function signInRefusal(err, withKey) {
  if (err.code === 'SECOND_FACTOR_REQUIRED') {
    return 'Your account asks for a second factor: enter the code your authenticator app shows now.';
  }
  if (err.status === 401 && /wrong code/.test(err.message)) {
    return 'That code was not accepted (each code works once). Enter the code the app shows now, or a recovery code.';
  }
  if (err.status === 401) {
    return withKey
      ? 'That key was not accepted: it is unknown, disabled or expired. Check it, or ask the organization owner for a new one.'
      : 'Wrong sign-in name or password. Check both and try again.';
  }
  if (err.status === 403) return `${err.message.replace(/\.$/, '')}.`;
  return sentence(err);
}

function signInPage(message, withKey = false) {
  signedOutShell('Sign in');
  const login = h('input', {
    type: 'text',
    name: 'username',
    autocomplete: 'username',
    required: true,
    spellcheck: 'false',
  });
  const password = h('input', {
    type: 'password',
    name: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const key = h('input', {
    type: 'password',
    name: 'key',
    autocomplete: 'off',
    required: true,
    spellcheck: 'false',
    placeholder: 'stw_dev_… or stw_srv_…',
  });
  // shown once the password was right and the account has a second factor
  let recovery = false;
  const code = h('input', {
    type: 'text',
    name: 'code',
    autocomplete: 'one-time-code',
    inputmode: 'numeric',
    spellcheck: 'false',
  });
  const codeLabel = h('label', { for: 'sign-in-code' }, 'Code from your authenticator app');
  code.id = 'sign-in-code';
  const codeSwitch = h(
    'button',
    {
      type: 'button',
      class: 'link',
      onclick: () => {
        recovery = !recovery;
        codeLabel.textContent = recovery ? 'Recovery code' : 'Code from your authenticator app';
        code.setAttribute('inputmode', recovery ? 'text' : 'numeric');
        codeSwitch.textContent = recovery
          ? 'Use the authenticator app instead'
          : 'Use a recovery code instead';
        code.value = '';
        code.focus();
      },
    },
    'Use a recovery code instead',
  );
  const codeField = h('div', { class: 'field', hidden: true }, codeLabel, code, codeSwitch);
  const problem = h('div', { class: 'form-error', role: 'alert' });
  if (message) problem.append(h('p', {}, message));
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (e) => {
        e.preventDefault();
        problem.replaceChildren();
        const button = form.querySelector('button[type=submit]');
        button.disabled = true;
        try {
          const proof = !codeField.hidden && code.value.trim() ? code.value.trim() : undefined;
          await signIn(
            withKey
              ? { key: key.value }
              : {
                  login: login.value,
                  password: password.value,
                  code: recovery ? undefined : proof,
                  recoveryCode: recovery ? proof : undefined,
                },
          );
          key.value = '';
          password.value = '';
          me = null;
          route();
        } catch (err) {
          problem.append(h('p', {}, signInRefusal(err, withKey)));
          button.disabled = false;
          if (err.code === 'SECOND_FACTOR_REQUIRED' || /wrong code/.test(err.message)) {
            codeField.hidden = false;
            code.value = '';
            code.focus();
          } else {
            (withKey ? key : password).focus();
          }
        }
      },
    },
    h('h1', {}, 'Sign in to Stowage'),
    withKey
      ? [
          h(
            'p',
            { class: 'muted' },
            'Paste an API key. It is exchanged for a session and not kept by your browser; ' +
              "what you see and do is limited to that key's permissions and paths.",
          ),
          field('API key', key),
        ]
      : [
          h('p', { class: 'muted' }, 'Sign in with the name and password of your invitation.'),
          field('Sign-in name', login),
          field('Password', password),
          codeField,
        ],
    problem,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    h(
      'p',
      {},
      h(
        'button',
        { type: 'button', class: 'link', onclick: () => signInPage('', !withKey) },
        withKey ? 'Sign in with a name and password instead' : 'Use an API key instead',
      ),
    ),
  );
  main().replaceChildren(form);
  (withKey ? key : login).focus();
}

/** `/invite#<token>`: what the invitation gives, then a form to accept it. */
/** The page of a one-time link that does not work (used, withdrawn, replaced or expired). */
function deadLink(title, err) {
  return h(
    'div',
    { class: 'card narrow' },
    h('h1', {}, title),
    h('p', {}, err.status === 404 ? `${err.message.replace(/\.$/, '')}.` : sentence(err)),
    h('p', {}, h('a', { href: '/overview', 'data-link': true }, 'Go to sign-in')),
  );
}

async function invitePage() {
  signedOutShell('Accept an invitation');
  const token = decodeURIComponent(location.hash.slice(1));
  const root = main();
  let offer;
  try {
    offer = await consolePost('/invitation/preview', { token });
  } catch (err) {
    root.replaceChildren(deadLink('This invitation does not work', err));
    return;
  }
  const login = h('input', { type: 'text', autocomplete: 'username', required: true });
  const name = h('input', { type: 'text', autocomplete: 'name', maxlength: '100' });
  const password = h('input', {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: '10',
  });
  const problem = h('div', { class: 'form-error', role: 'alert' });
  const where = offer.servers ? `servers ${offer.servers.join(', ')}` : 'every server';
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (e) => {
        e.preventDefault();
        problem.replaceChildren();
        try {
          await consolePost('/invitation/accept', {
            token,
            login: login.value,
            password: password.value,
            displayName: name.value || undefined,
          });
          me = null;
          navigate('/overview', { replace: true });
        } catch (err) {
          problem.append(
            h(
              'p',
              {},
              err.status === 400 || err.status === 409 || err.status === 401
                ? `${err.message.replace(/\.$/, '')}.`
                : sentence(err),
            ),
          );
        }
      },
    },
    h('h1', {}, `Join ${offer.organization}`),
    h('p', {}, `You are invited as ${offer.role}, for ${where}.`),
    field(
      'Sign-in name',
      login,
      'An email address or a user name. If you already have one, use it and its password.',
    ),
    field('Your name', name, 'Shown to your team (optional).'),
    field('Password', password, 'At least 10 characters; a few unrelated words make a strong one.'),
    problem,
    h('button', { type: 'submit', class: 'primary' }, 'Accept and sign in'),
    h(
      'p',
      { class: 'muted' },
      `The link works once, until ${new Date(offer.expiresAt).toLocaleString()}.`,
    ),
  );
  root.replaceChildren(form);
  login.focus();
}

/** `/reset#<token>`: a new password with a reset link an owner or admin made. */
async function resetPage() {
  signedOutShell('Set a new password');
  const token = decodeURIComponent(location.hash.slice(1));
  const root = main();
  let who;
  try {
    who = await consolePost('/password-reset/preview', { token });
  } catch (err) {
    root.replaceChildren(deadLink('This reset link does not work', err));
    return;
  }
  const password = h('input', {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: '10',
  });
  const problem = h('div', { class: 'form-error', role: 'alert' });
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (e) => {
        e.preventDefault();
        problem.replaceChildren();
        try {
          await consolePost('/password-reset', { token, password: password.value });
          history.replaceState(null, '', '/overview');
          signInPage(`Your password is changed. Sign in as ${who.login} with it.`);
        } catch (err) {
          problem.append(
            h('p', {}, err.status === 400 ? `${err.message.replace(/\.$/, '')}.` : sentence(err)),
          );
        }
      },
    },
    h('h1', {}, 'Set a new password'),
    h('p', {}, `For ${who.login}. Your other sessions end when it is set.`),
    field(
      'New password',
      password,
      'At least 10 characters; a few unrelated words make a strong one.',
    ),
    problem,
    h('button', { type: 'submit', class: 'primary' }, 'Set the password'),
  );
  root.replaceChildren(form);
  password.focus();
}

/** The header: who is signed in, and an organization switch for members of several. */
function header(s) {
  setMemberSession(Boolean(me.member));
  const who = document.getElementById('who');
  who.textContent = me.member
    ? `${me.organization.name} · ${me.member.displayName || me.member.login} (${me.member.role})`
    : `${me.organization.name} · ${me.name || me.keyId}`;
  document.getElementById('org-switch')?.remove();
  const orgs = s.member?.organizations || [];
  if (orgs.length > 1) {
    const pick = h(
      'select',
      {
        id: 'org-switch',
        'aria-label': 'Organization',
        onchange: async () => {
          await consolePost('/session/organization', { organizationId: pick.value });
          me = null;
          navigate('/overview');
        },
      },
      orgs.map((o) =>
        h(
          'option',
          { value: o.id, selected: o.id === s.member.organizationId || undefined },
          o.name,
        ),
      ),
    );
    who.after(pick);
  }
  const manages = me.member && (me.member.role === 'owner' || me.member.role === 'admin');
  document.getElementById('nav-members').hidden = !manages;
  document.getElementById('nav-keys').hidden = !manages;
  document.getElementById('nav-audit').hidden = !manages;
  document.getElementById('nav-account').hidden = !me.member;
}

async function route() {
  if (current && current.leave) current.leave();
  current = null;
  if (location.pathname === '/invite') return invitePage();
  if (location.pathname === '/reset') return resetPage();
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
      main().replaceChildren(errorBox(sentence(err), retryable(err) ? route : undefined));
      return;
    }
  }
  document.getElementById('nav').hidden = false;
  document.getElementById('signout').hidden = false;
  header(s);
  let path = location.pathname;
  if (path === '/' || path === '') {
    path = '/overview';
    history.replaceState(null, '', '/overview');
  }
  // a player's page (/players/<id or identifier>) and the lookup (/players?name=…) belong to
  // the logs
  const players = path === '/players' || path.startsWith('/players/');
  for (const a of document.querySelectorAll('#nav a')) {
    const here = a.getAttribute('href') === (players ? '/logs' : path);
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const make = players ? playersView : views[path];
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
    root.append(errorBox(sentence(err), retryable(err) ? route : undefined));
  }
}

document.addEventListener('click', (e) => {
  const a = /** @type {Element} */ (e.target).closest('a[data-link]');
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', route);
window.addEventListener('stowage:signed-out', (e) => {
  me = null;
  const detail = /** @type {CustomEvent} */ (e).detail;
  signInPage(detail?.message || 'Your session has ended. Sign in again.');
});
document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('signout').addEventListener('click', async () => {
    await signOut();
    me = null;
    navigate('/overview', { replace: true });
  });
  route();
});
