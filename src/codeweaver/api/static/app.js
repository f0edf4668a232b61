/* CodeWeaver web page: conversations, streamed answers with their steps and sources.
 *
 * Plain ES2020, no framework, no build. The page is served with a strict
 * Content-Security-Policy, so nothing here uses inline handlers, inline styles or eval.
 *
 * Security rule: every string that comes from a user, a model or the web is put into the
 * page with textContent. The one exception is the `html` of an answer, which the server
 * renders with raw HTML disabled and then sanitises (nh3); it is the only value ever
 * assigned to innerHTML (see `setAnswerHtml`).
 */
(() => {
  'use strict';

  // ---------------------------------------------------------------- strings

  const STRINGS = {
    en: {
      conversations: 'Conversations',
      conversationHeading: 'Conversation',
      newConversation: 'New conversation',
      noConversations: 'No conversations yet.',
      loadingConversations: 'Loading…',
      untitled: '(untitled)',
      messageCount: '{n} messages',
      deleteConversation: 'Delete',
      deleteConversationLabel: 'Delete the conversation “{title}”',
      confirmDelete: 'Delete?',
      confirmDeleteLabel: 'Click again to delete “{title}”',
      switchLanguage: '한국어',
      switchLanguageLabel: 'Switch the interface to Korean',
      emptyState: 'Ask a programming question. Answers cite their sources.',
      questionLabel: 'Your question',
      questionPlaceholder: 'Ask a programming question (Enter sends, Shift+Enter adds a line)',
      send: 'Send',
      stop: 'Stop',
      you: 'You',
      assistant: 'CodeWeaver',
      steps: 'Steps',
      stepsCount: 'Steps ({n})',
      think: 'think',
      act: 'act',
      observe: 'observe',
      stepError: 'error',
      starting: 'Starting…',
      waiting: 'Waiting in line, position {n}',
      writing: 'Writing the answer…',
      sources: 'Sources',
      noSources: 'No sources were used.',
      copy: 'Copy',
      copyLabel: 'Copy this code',
      copied: 'Copied',
      copyFailed: 'Copy failed',
      helpful: 'Helpful',
      notHelpful: 'Not helpful',
      feedbackThanks: 'Thanks for the feedback.',
      feedbackRemoved: 'Thanks. This answer will not be reused from the cache.',
      feedbackFailed: 'The feedback was not saved: {detail}',
      retry: 'Retry',
      stopped: 'Stopped.',
      streamEnded: 'The connection closed before the answer was finished.',
      networkError: 'Could not reach the server: {detail}',
      httpError: 'The request failed ({status}): {detail}',
      loadFailed: 'Could not load the conversation: {detail}',
      listFailed: 'Could not load the conversations: {detail}',
      deleteFailed: 'Could not delete the conversation: {detail}',
      tokenTitle: 'API token required',
      tokenHint: 'This server asks for a token. It is kept in this browser only.',
      tokenLabel: 'API token',
      tokenSave: 'Save',
      tokenNeeded: 'The server needs an API token (see the form above).',
    },
    ko: {
      conversations: '대화 목록',
      conversationHeading: '대화',
      newConversation: '새 대화',
      noConversations: '아직 대화가 없습니다.',
      loadingConversations: '불러오는 중…',
      untitled: '(제목 없음)',
      messageCount: '메시지 {n}개',
      deleteConversation: '삭제',
      deleteConversationLabel: '“{title}” 대화 삭제',
      confirmDelete: '삭제할까요?',
      confirmDeleteLabel: '한 번 더 누르면 “{title}” 대화가 삭제됩니다',
      switchLanguage: 'English',
      switchLanguageLabel: '인터페이스를 영어로 바꾸기',
      emptyState: '프로그래밍 질문을 입력하세요. 답변에는 출처가 붙습니다.',
      questionLabel: '질문',
      questionPlaceholder: '프로그래밍 질문을 입력하세요 (Enter 전송, Shift+Enter 줄바꿈)',
      send: '보내기',
      stop: '중지',
      you: '나',
      assistant: 'CodeWeaver',
      steps: '진행 단계',
      stepsCount: '진행 단계 ({n})',
      think: '생각',
      act: '실행',
      observe: '관찰',
      stepError: '오류',
      starting: '시작하는 중…',
      waiting: '대기 중, {n}번째',
      writing: '답변을 작성하는 중…',
      sources: '출처',
      noSources: '사용한 출처가 없습니다.',
      copy: '복사',
      copyLabel: '이 코드 복사',
      copied: '복사됨',
      copyFailed: '복사 실패',
      helpful: '도움됨',
      notHelpful: '도움 안 됨',
      feedbackThanks: '의견 감사합니다.',
      feedbackRemoved: '감사합니다. 이 답변은 캐시에서 다시 쓰이지 않습니다.',
      feedbackFailed: '의견을 저장하지 못했습니다: {detail}',
      retry: '다시 시도',
      stopped: '중지했습니다.',
      streamEnded: '답변이 끝나기 전에 연결이 끊겼습니다.',
      networkError: '서버에 연결할 수 없습니다: {detail}',
      httpError: '요청이 실패했습니다 ({status}): {detail}',
      loadFailed: '대화를 불러오지 못했습니다: {detail}',
      listFailed: '대화 목록을 불러오지 못했습니다: {detail}',
      deleteFailed: '대화를 삭제하지 못했습니다: {detail}',
      tokenTitle: 'API 토큰 필요',
      tokenHint: '이 서버는 토큰을 요구합니다. 토큰은 이 브라우저에만 저장됩니다.',
      tokenLabel: 'API 토큰',
      tokenSave: '저장',
      tokenNeeded: '서버에 API 토큰이 필요합니다 (위 입력란을 확인하세요).',
    },
  };

  const STORE = { lang: 'codeweaver.lang', token: 'codeweaver.token' };
  const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/;

  /** localStorage that fails quietly (private mode, disabled storage). */
  const storage = {
    get(key) {
      try { return window.localStorage.getItem(key); } catch { return null; }
    },
    set(key, value) {
      try { window.localStorage.setItem(key, value); } catch { /* not persisted */ }
    },
  };

  let lang = pickLanguage();

  function pickLanguage() {
    const saved = storage.get(STORE.lang);
    if (saved === 'ko' || saved === 'en') return saved;
    return (navigator.language || '').toLowerCase().startsWith('ko') ? 'ko' : 'en';
  }

  /** The UI string `key` in the current language, with `{name}` placeholders filled. */
  function t(key, vars) {
    const text = STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
    if (!vars) return text;
    return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
  }

  /** Give `el` a translatable text: it is re-translated when the language changes. */
  function setText(el, key, vars) {
    el.dataset.i18n = key;
    if (vars) el.dataset.i18nVars = JSON.stringify(vars);
    else delete el.dataset.i18nVars;
    el.textContent = t(key, vars);
    return el;
  }

  /** The dataset name of `data-i18n-<attr>`: 'aria-label' → 'i18nAriaLabel'. */
  function attrSlot(attr) {
    return 'i18n' + attr.split('-').map((p) => p[0].toUpperCase() + p.slice(1)).join('');
  }

  /** Same for an attribute (aria-label, title, placeholder). */
  function setAttrText(el, attr, key, vars) {
    const slot = attrSlot(attr);
    el.dataset[slot] = key;
    if (vars) el.dataset[slot + 'Vars'] = JSON.stringify(vars);
    else delete el.dataset[slot + 'Vars'];
    el.setAttribute(attr, t(key, vars));
    return el;
  }

  function applyLanguage() {
    document.documentElement.lang = lang;
    const vars = (el, slot) => (el.dataset[slot] ? JSON.parse(el.dataset[slot]) : undefined);
    for (const el of document.querySelectorAll('[data-i18n]')) {
      el.textContent = t(el.dataset.i18n, vars(el, 'i18nVars'));
    }
    for (const attr of ['aria-label', 'placeholder', 'title']) {
      const slot = attrSlot(attr);
      for (const el of document.querySelectorAll('[data-i18n-' + attr + ']')) {
        el.setAttribute(attr, t(el.dataset[slot], vars(el, slot + 'Vars')));
      }
    }
    // The toggle names the language it switches to, in that language.
    $('#lang-toggle').lang = lang === 'ko' ? 'en' : 'ko';
    for (const el of document.querySelectorAll('time[data-epoch]')) {
      el.textContent = formatTime(Number(el.dataset.epoch));
    }
  }

  // ---------------------------------------------------------------- helpers

  const $ = (selector, root = document) => root.querySelector(selector);

  /** A new element with classes and, optionally, a translated text. */
  function el(tag, className, key, vars) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (key) setText(node, key, vars);
    return node;
  }

  function button(className, key, vars) {
    const node = el('button', className, key, vars);
    node.type = 'button';
    return node;
  }

  function formatTime(epochSeconds) {
    if (!Number.isFinite(epochSeconds)) return '';
    const locale = lang === 'ko' ? 'ko-KR' : 'en';
    return new Date(epochSeconds * 1000).toLocaleString(locale, {
      dateStyle: 'medium',
      timeStyle: 'short',
    });
  }

  /** Only http(s) links become clickable; anything else (javascript:, data:) stays text. */
  function isWebUrl(url) {
    return typeof url === 'string' && /^https?:\/\//i.test(url.trim());
  }

  // ---------------------------------------------------------------- API

  class ApiError extends Error {
    constructor(status, detail) {
      super(detail);
      this.status = status;
      this.detail = detail;
    }
  }

  /** The readable text of an error body: FastAPI's `detail` is a string or a list. */
  async function errorDetail(response) {
    try {
      const body = await response.json();
      const detail = body && body.detail;
      if (typeof detail === 'string') return detail;
      if (Array.isArray(detail)) {
        return detail.map((d) => (d && d.msg ? String(d.msg) : JSON.stringify(d))).join('; ');
      }
      if (detail !== undefined) return JSON.stringify(detail);
    } catch { /* not JSON */ }
    return response.statusText || String(response.status);
  }

  /**
   * fetch() with the bearer token; a non-2xx answer throws ApiError with the server's
   * detail. A 401 also opens the token form; `retry` runs again once a token is saved.
   */
  async function api(path, options = {}, retry = null) {
    const headers = new Headers(options.headers || {});
    const token = storage.get(STORE.token);
    if (token) headers.set('Authorization', 'Bearer ' + token);
    if (options.body !== undefined) headers.set('Content-Type', 'application/json');
    let response;
    try {
      response = await fetch(path, { ...options, headers, cache: 'no-store' });
    } catch (err) {
      if (err && err.name === 'AbortError') throw err;
      throw new ApiError(0, String(err && err.message ? err.message : err));
    }
    if (response.ok) return response;
    const detail = await errorDetail(response);
    if (response.status === 401) askForToken(retry);
    throw new ApiError(response.status, detail);
  }

  /** What went wrong, as a translatable message: {key, vars}. */
  function explain(err) {
    if (err instanceof ApiError) {
      return err.status
        ? { key: 'httpError', vars: { status: err.status, detail: err.detail } }
        : { key: 'networkError', vars: { detail: err.detail } };
    }
    const detail = String(err && err.message ? err.message : err);
    return { key: 'networkError', vars: { detail } };
  }

  function describe(err) {
    const { key, vars } = explain(err);
    return t(key, vars);
  }

  // ---------------------------------------------------------------- token form

  const pendingAfterToken = new Set();

  function askForToken(retry) {
    if (retry) pendingAfterToken.add(retry);
    const form = $('#token-form');
    if (form.hidden) {
      form.hidden = false;
      $('#token-input').focus();
    }
  }

  function onTokenSubmit(event) {
    event.preventDefault();
    const value = $('#token-input').value.trim();
    if (!value) return;
    storage.set(STORE.token, value);
    $('#token-input').value = '';
    $('#token-form').hidden = true;
    const retries = [...pendingAfterToken];
    pendingAfterToken.clear();
    for (const retry of retries) retry();
  }

  // ---------------------------------------------------------------- Server-Sent Events

  /**
   * Read an SSE body (fetch, because EventSource cannot POST) and call
   * `onEvent(name, data, id)` per event. Follows the WHATWG parsing rules: lines end in
   * CRLF, LF or CR; lines starting with ':' are comments (the server's keep-alive pings);
   * a blank line dispatches the event.
   */
  async function readEvents(body, onEvent) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let name = '';
    let data = [];
    let id = '';

    const line = (text) => {
      if (text === '') {
        if (data.length) onEvent(name || 'message', data.join('\n'), id);
        name = '';
        data = [];
        return;
      }
      if (text.startsWith(':')) return;
      const colon = text.indexOf(':');
      const field = colon === -1 ? text : text.slice(0, colon);
      let value = colon === -1 ? '' : text.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') name = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    };

    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let text = buffer + decoder.decode(value, { stream: true });
      // A CR at the very end may be the first half of a CRLF split across two chunks:
      // keep it back, or the LF would read as a blank line and dispatch too early.
      let held = '';
      if (text.endsWith('\r')) {
        held = '\r';
        text = text.slice(0, -1);
      }
      const lines = text.split(/\r\n|\r|\n/);
      buffer = lines.pop() + held;
      for (const l of lines) line(l);
    }
    // An event without its closing blank line is incomplete and, per the spec, dropped.
  }

  // ---------------------------------------------------------------- state

  const state = {
    sessionId: null, // the conversation on screen; null for a new one
    controller: null, // AbortController of the answer being streamed
    loadToken: 0, // drops a session load that a later click overtook
  };

  function sessionFromHash() {
    const match = /^#session=([A-Za-z0-9_-]{1,64})$/.exec(window.location.hash);
    return match ? match[1] : null;
  }

  /** Keep the open conversation in the URL, so a reload (or a shared link) reopens it. */
  function rememberSession(id) {
    state.sessionId = id;
    const hash = id ? '#session=' + id : '';
    if (window.location.hash !== hash) {
      // replaceState does not fire hashchange, so this does not reload the session.
      history.replaceState(null, '', window.location.pathname + window.location.search + hash);
    }
    markActiveSession();
  }

  // ---------------------------------------------------------------- session list

  async function refreshSessions() {
    const status = $('#session-status');
    let sessions;
    try {
      const response = await api('/api/sessions', {}, refreshSessions);
      sessions = await response.json();
    } catch (err) {
      setText(status, 'listFailed', { detail: describe(err) });
      return;
    }
    const list = $('#session-list');
    list.replaceChildren();
    if (!Array.isArray(sessions) || sessions.length === 0) {
      setText(status, 'noConversations');
      return;
    }
    status.textContent = '';
    delete status.dataset.i18n;
    for (const session of sessions) list.append(sessionItem(session));
    markActiveSession();
  }

  function sessionItem(session) {
    const item = el('li', 'session-item');
    item.dataset.sessionId = session.id;
    const title = session.title || '';

    const open = button('session-open');
    const name = el('span', 'session-title');
    if (title) name.textContent = title;
    else setText(name, 'untitled');
    const meta = el('span', 'session-meta');
    const when = el('time');
    when.dataset.epoch = String(session.updated);
    when.textContent = formatTime(Number(session.updated));
    meta.append(when, ' · ', setText(el('span'), 'messageCount', { n: session.messages }));
    open.append(name, meta);
    open.addEventListener('click', () => {
      closeSidebarOnPhone();
      openSession(session.id);
    });

    const remove = button('session-delete', 'deleteConversation');
    setAttrText(remove, 'aria-label', 'deleteConversationLabel', { title: title || '…' });
    remove.addEventListener('click', () => onDeleteClick(remove, session.id, title || '…'));

    item.append(open, remove);
    return item;
  }

  let disarmTimer = null;

  /** Delete takes two clicks (no confirm() dialog): the first one arms the button. */
  async function onDeleteClick(btn, id, title) {
    if (btn.dataset.armed !== 'true') {
      btn.dataset.armed = 'true';
      setText(btn, 'confirmDelete');
      setAttrText(btn, 'aria-label', 'confirmDeleteLabel', { title });
      clearTimeout(disarmTimer);
      disarmTimer = setTimeout(() => {
        btn.dataset.armed = 'false';
        setText(btn, 'deleteConversation');
        setAttrText(btn, 'aria-label', 'deleteConversationLabel', { title });
      }, 4000);
      return;
    }
    clearTimeout(disarmTimer);
    btn.disabled = true;
    try {
      await api('/api/sessions/' + encodeURIComponent(id), { method: 'DELETE' });
    } catch (err) {
      btn.disabled = false;
      setText($('#session-status'), 'deleteFailed', { detail: describe(err) });
      return;
    }
    if (state.sessionId === id) newConversation();
    await refreshSessions();
  }

  function markActiveSession() {
    for (const item of document.querySelectorAll('#session-list .session-item')) {
      const open = $('.session-open', item);
      if (item.dataset.sessionId === state.sessionId) open.setAttribute('aria-current', 'true');
      else open.removeAttribute('aria-current');
    }
  }

  // ---------------------------------------------------------------- conversation

  function stopStreaming() {
    if (state.controller) state.controller.abort();
    state.controller = null;
  }

  function clearMessages() {
    $('#messages').replaceChildren();
    updateEmptyState();
  }

  function updateEmptyState() {
    $('#empty-state').hidden = $('#messages').childElementCount > 0;
  }

  function newConversation() {
    stopStreaming();
    state.loadToken += 1;
    rememberSession(null);
    clearMessages();
    $('#question').focus();
  }

  async function openSession(id) {
    if (!SESSION_ID.test(id)) return;
    stopStreaming();
    const token = ++state.loadToken;
    let session;
    try {
      const response = await api(
        '/api/sessions/' + encodeURIComponent(id),
        {},
        () => openSession(id),
      );
      session = await response.json();
    } catch (err) {
      if (token !== state.loadToken) return;
      clearMessages();
      if (err instanceof ApiError && err.status === 404) rememberSession(null);
      const note = el('p', 'notice error', 'loadFailed', { detail: describe(err) });
      note.setAttribute('role', 'alert');
      $('#messages').append(note);
      updateEmptyState();
      return;
    }
    if (token !== state.loadToken) return;
    rememberSession(session.id);
    clearMessages();
    for (const message of session.history || []) {
      if (message.role === 'user') {
        appendQuestion(message.content);
      } else if (message.role === 'assistant') {
        const answer = createAnswer();
        answer.root.dataset.turn = String(message.turn);
        finishAnswer(answer, {
          session_id: session.id,
          turn: message.turn,
          html: message.html,
          sources: message.sources,
        });
      }
    }
    updateEmptyState();
    scrollToEnd(true);
  }

  function appendQuestion(text) {
    const item = el('article', 'message question');
    const role = el('h3', 'message-role', 'you');
    const body = el('p', 'question-text');
    body.textContent = text;
    item.append(role, body);
    $('#messages').append(item);
    updateEmptyState();
    return item;
  }

  /** An empty answer block; its parts are filled by the stream or from the history. */
  function createAnswer() {
    const root = el('article', 'message answer');
    root.dataset.state = 'streaming';
    const role = el('h3', 'message-role', 'assistant');

    const steps = el('details', 'steps');
    steps.hidden = true;
    const summary = el('summary', 'steps-summary', 'steps');
    const stepList = el('ol', 'step-list');
    steps.append(summary, stepList);

    const status = el('p', 'answer-status muted');
    status.setAttribute('role', 'status');
    const body = el('div', 'answer-body');
    const stream = el('div', 'answer-stream');
    body.append(stream);
    const error = el('div', 'answer-error');
    error.hidden = true;
    const sources = el('section', 'sources');
    sources.hidden = true;
    const actions = el('div', 'answer-actions');
    actions.hidden = true;

    root.append(role, steps, status, body, error, sources, actions);
    $('#messages').append(root);
    updateEmptyState();
    return { root, steps, summary, stepList, status, body, stream, error, sources, actions };
  }

  function addStep(answer, kind, data) {
    const failed = Boolean(data.error);
    const item = el('li', 'step step-' + kind + (failed ? ' step-error' : ''));
    const label = el('span', 'step-kind', failed ? 'stepError' : kind);
    const node = el('span', 'step-node');
    node.textContent = String(data.node || '');
    const text = el('span', 'step-text');
    // The API sends the step's text as `message` (older builds: `text`).
    text.textContent = String(data.text ?? data.message ?? '');
    item.append(label, node, text);
    answer.stepList.append(item);
    answer.steps.hidden = false;
    // Opened once, as the run starts; a reader who closes it keeps it closed.
    if (answer.stepList.childElementCount === 1 && answer.root.dataset.state === 'streaming') {
      answer.steps.open = true;
    }
    setText(answer.summary, 'stepsCount', { n: answer.stepList.childElementCount });
  }

  /** Swap the streamed text for the server's sanitised HTML and add sources and actions. */
  function finishAnswer(answer, done) {
    setAnswerHtml(answer.body, done.html);
    addCopyButtons(answer.body);
    renderSources(answer, done.sources || []);
    renderFeedback(answer, done.session_id, done.turn);
    answer.status.textContent = '';
    delete answer.status.dataset.i18n;
    answer.steps.open = false;
    answer.root.dataset.turn = String(done.turn);
    answer.root.dataset.state = 'done';
  }

  /**
   * The only innerHTML assignment in this file. `html` is the server's rendering of the
   * answer: markdown-it with raw HTML disabled, then nh3 with an allow-list of tags.
   */
  function setAnswerHtml(container, html) {
    container.innerHTML = typeof html === 'string' ? html : '';
  }

  /** Show why the answer failed: `message` is the server's text or {key, vars} of ours. */
  function failAnswer(answer, message, retry) {
    answer.root.dataset.state = 'error';
    answer.status.textContent = '';
    delete answer.status.dataset.i18n;
    answer.error.hidden = false;
    answer.error.setAttribute('role', 'alert');
    const text = el('p', 'error-text');
    if (typeof message === 'string') text.textContent = message;
    else setText(text, message.key, message.vars);
    answer.error.replaceChildren(text);
    if (retry) {
      const again = button('retry', 'retry');
      again.addEventListener('click', retry);
      answer.error.append(again);
    }
  }

  // ---------------------------------------------------------------- sources

  function renderSources(answer, sources) {
    const section = answer.sources;
    section.replaceChildren();
    section.hidden = false;
    section.append(el('h4', 'sources-title', 'sources'));
    if (!sources.length) {
      section.append(el('p', 'muted', 'noSources'));
      return;
    }
    const list = el('ol', 'source-list');
    for (const source of sources) {
      const n = Number.parseInt(source.n, 10);
      const item = el('li', 'source');
      item.dataset.n = String(n);
      item.tabIndex = -1; // focusable from a citation, not a tab stop
      const number = el('span', 'source-n');
      number.textContent = '[' + n + ']';
      let title;
      if (isWebUrl(source.url)) {
        title = el('a', 'source-title');
        title.href = source.url.trim();
        title.target = '_blank';
        title.rel = 'noopener noreferrer';
      } else {
        title = el('span', 'source-title');
      }
      title.textContent = String(source.title || source.url || '');
      item.append(number, title);
      if (source.source) {
        const name = el('span', 'source-name');
        name.textContent = String(source.source);
        item.append(name);
      }
      if (source.attribution) {
        const credit = el('span', 'source-attribution');
        credit.textContent = String(source.attribution);
        item.append(credit);
      }
      list.append(item);
    }
    section.append(list);
  }

  /** A click on `[n]` in an answer shows source n of that same answer. */
  function onCitationClick(event) {
    const link = event.target.closest('a.cite');
    if (!link) return;
    event.preventDefault();
    const answer = link.closest('.answer');
    const n = Number.parseInt(link.dataset.n, 10);
    if (!answer || !Number.isInteger(n)) return;
    // n is an integer here, so it is safe inside the selector.
    const item = answer.querySelector('.source-list > li[data-n="' + n + '"]');
    if (!item) return;
    for (const other of answer.querySelectorAll('.source-list > li.highlight')) {
      other.classList.remove('highlight');
      other.removeAttribute('aria-current');
    }
    item.classList.add('highlight');
    item.setAttribute('aria-current', 'true');
    item.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    item.focus({ preventScroll: true });
  }

  // ---------------------------------------------------------------- code copy

  function addCopyButtons(container) {
    for (const code of container.querySelectorAll('pre > code')) {
      const pre = code.parentElement;
      // A wrapper, so the button stays put while a long line scrolls sideways.
      const wrap = el('div', 'code-block');
      pre.replaceWith(wrap);
      const copy = button('code-copy', 'copy');
      setAttrText(copy, 'aria-label', 'copyLabel');
      copy.addEventListener('click', () => copyText(copy, code.textContent || ''));
      wrap.append(copy, pre);
    }
  }

  async function copyText(btn, text) {
    let ok = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        ok = true;
      }
    } catch { /* denied: try the old way */ }
    if (!ok) ok = legacyCopy(text);
    setText(btn, ok ? 'copied' : 'copyFailed');
    btn.classList.toggle('done', ok);
    setTimeout(() => {
      setText(btn, 'copy');
      btn.classList.remove('done');
    }, 2000);
  }

  function legacyCopy(text) {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch { ok = false; }
    area.remove();
    return ok;
  }

  // ---------------------------------------------------------------- feedback

  function renderFeedback(answer, sessionId, turn) {
    const actions = answer.actions;
    actions.replaceChildren();
    if (!sessionId || !Number.isInteger(turn)) return;
    actions.hidden = false;
    const up = button('feedback feedback-up');
    const down = button('feedback feedback-down');
    up.append(thumbIcon(false));
    down.append(thumbIcon(true));
    setAttrText(up, 'aria-label', 'helpful');
    setAttrText(down, 'aria-label', 'notHelpful');
    setAttrText(up, 'title', 'helpful');
    setAttrText(down, 'title', 'notHelpful');
    up.setAttribute('aria-pressed', 'false');
    down.setAttribute('aria-pressed', 'false');
    const note = el('span', 'feedback-note muted');
    note.setAttribute('role', 'status');
    const send = async (rating, pressed, other) => {
      up.disabled = down.disabled = true;
      try {
        const response = await api('/api/feedback', {
          method: 'POST',
          body: JSON.stringify({ session_id: sessionId, turn, rating }),
        });
        const result = await response.json();
        pressed.setAttribute('aria-pressed', 'true');
        other.setAttribute('aria-pressed', 'false');
        setText(note, result.cache_removed ? 'feedbackRemoved' : 'feedbackThanks');
      } catch (err) {
        setText(note, 'feedbackFailed', { detail: describe(err) });
      } finally {
        up.disabled = down.disabled = false;
      }
    };
    up.addEventListener('click', () => send('up', up, down));
    down.addEventListener('click', () => send('down', down, up));
    actions.append(up, down, note);
  }

  /**
   * A thumb icon as inline SVG (drawn by the page, so it needs no emoji font or image
   * request); thumbs-down is thumbs-up mirrored top to bottom.
   */
  function thumbIcon(down) {
    const NS = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('class', 'icon');
    svg.setAttribute('aria-hidden', 'true');
    svg.setAttribute('focusable', 'false');
    const path = document.createElementNS(NS, 'path');
    path.setAttribute(
      'd',
      'M7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3m0 11V11l4-9a3 3 0 0 1 3 3v4h5.7' +
        'a2 2 0 0 1 2 2.3l-1.4 9a2 2 0 0 1-2 1.7z',
    );
    if (down) path.setAttribute('transform', 'matrix(1 0 0 -1 0 24)');
    svg.append(path);
    return svg;
  }

  // ---------------------------------------------------------------- asking

  function setBusy(busy) {
    $('#send').disabled = busy;
    $('#stop').hidden = !busy;
    $('#conversation').setAttribute('aria-busy', busy ? 'true' : 'false');
  }

  /** Follow the answer as it grows, unless the reader scrolled up to read something. */
  function scrollToEnd(force) {
    const box = $('#conversation');
    const nearEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 120;
    if (force || nearEnd) box.scrollTop = box.scrollHeight;
  }

  async function ask(question) {
    if (state.controller) return;
    const controller = new AbortController();
    state.controller = controller;
    state.loadToken += 1; // a session still loading must not replace this conversation
    setBusy(true);
    const asked = appendQuestion(question);
    const answer = createAnswer();
    setText(answer.status, 'starting');
    scrollToEnd(true);

    const payload = { message: question };
    if (state.sessionId) payload.session_id = state.sessionId;
    const retry = () => {
      if (state.controller) return; // another answer is streaming; keep this one as is
      asked.remove();
      answer.root.remove();
      ask(question);
    };
    let finished = false;
    try {
      const response = await api(
        '/api/chat/stream',
        {
          method: 'POST',
          body: JSON.stringify(payload),
          headers: { Accept: 'text/event-stream' },
          signal: controller.signal,
        },
        retry,
      );
      await readEvents(response.body, (name, raw) => {
        let data;
        try { data = JSON.parse(raw); } catch { return; }
        finished = onStreamEvent(answer, name, data, retry) || finished;
      });
      if (!finished) failAnswer(answer, { key: 'streamEnded' }, retry);
    } catch (err) {
      if (err && err.name === 'AbortError') {
        if (!finished) failAnswer(answer, { key: 'stopped' }, retry);
      } else if (err instanceof ApiError && err.status === 401) {
        // The token form is open; the question runs again once a token is saved.
        failAnswer(answer, { key: 'tokenNeeded' }, null);
      } else {
        const retryable = !(err instanceof ApiError) || [0, 429, 503].includes(err.status);
        failAnswer(answer, explain(err), retryable ? retry : null);
      }
    } finally {
      if (state.controller === controller) state.controller = null;
      setBusy(state.controller !== null); // a newer answer may already be streaming
    }
  }

  /** Apply one stream event to `answer`; true once the answer is finished (done/error). */
  function onStreamEvent(answer, name, data, retry) {
    switch (name) {
      case 'queue':
        setText(answer.status, 'waiting', { n: data.position });
        return false;
      case 'think':
      case 'act':
      case 'observe':
        addStep(answer, name, data);
        scrollToEnd(false);
        return false;
      case 'token':
        if (answer.status.dataset.i18n !== 'writing') setText(answer.status, 'writing');
        // Text node: the streamed text is untrusted and must never be parsed as HTML.
        answer.stream.append(document.createTextNode(String(data.text ?? '')));
        scrollToEnd(false);
        return false;
      case 'done':
        finishAnswer(answer, data);
        if (data.session_id) rememberSession(data.session_id);
        refreshSessions();
        scrollToEnd(false);
        return true;
      case 'error':
        failAnswer(answer, String(data.message ?? ''), data.retryable ? retry : null);
        return true;
      default:
        return false; // an event this page does not know yet
    }
  }

  function onAskSubmit(event) {
    event.preventDefault();
    const box = $('#question');
    const question = box.value.trim();
    if (!question || state.controller) return;
    box.value = '';
    ask(question);
  }

  function onQuestionKey(event) {
    // Enter sends; Shift+Enter is a new line. While an IME is composing (Korean),
    // Enter confirms the syllable and must not send.
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing || event.keyCode === 229) {
      return;
    }
    event.preventDefault();
    $('#ask-form').requestSubmit();
  }

  // ---------------------------------------------------------------- layout

  function setSidebar(open) {
    document.body.classList.toggle('sidebar-open', open);
    $('#sidebar-toggle').setAttribute('aria-expanded', open ? 'true' : 'false');
  }

  function closeSidebarOnPhone() {
    if (document.body.classList.contains('sidebar-open')) setSidebar(false);
  }

  // ---------------------------------------------------------------- start

  function start() {
    applyLanguage();
    $('#lang-toggle').addEventListener('click', () => {
      lang = lang === 'ko' ? 'en' : 'ko';
      storage.set(STORE.lang, lang);
      applyLanguage();
    });
    $('#sidebar-toggle').addEventListener('click', () => {
      setSidebar(!document.body.classList.contains('sidebar-open'));
    });
    $('#new-session').addEventListener('click', () => {
      closeSidebarOnPhone();
      newConversation();
    });
    $('#token-form').addEventListener('submit', onTokenSubmit);
    $('#ask-form').addEventListener('submit', onAskSubmit);
    $('#question').addEventListener('keydown', onQuestionKey);
    $('#stop').addEventListener('click', stopStreaming);
    $('#messages').addEventListener('click', onCitationClick);
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') closeSidebarOnPhone();
    });
    window.addEventListener('hashchange', () => {
      const id = sessionFromHash();
      if (id && id !== state.sessionId) openSession(id);
      else if (!id && state.sessionId) newConversation();
    });

    setText($('#session-status'), 'loadingConversations');
    refreshSessions();
    const id = sessionFromHash();
    if (id) openSession(id);
    updateEmptyState();
  }

  start();
})();
