/* i18n.js: the interface strings (English, Korean), the language choice and the helpers
 * that put a translated string on an element so it follows later language changes.
 *
 * Strings go into the page with textContent or setAttribute only, never as HTML.
 */
import { STORE, storage } from './storage.js';

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
    confirmDeleteText: 'Delete this conversation? This cannot be undone.',
    confirmDelete: 'Delete',
    cancel: 'Cancel',
    switchLanguage: '한국어',
    switchLanguageLabel: 'Switch the interface to Korean',
    emptyState: 'Ask a programming question. Answers cite their sources.',
    questionLabel: 'Your question',
    questionPlaceholder: 'Ask a programming question',
    questionHint: 'Enter sends · Shift+Enter adds a line · code in ``` fences stays code',
    send: 'Send',
    stop: 'Stop',
    modeLabel: 'Answer mode',
    modeHint: 'Pipeline searches every source at once; the librarian searches step by step',
    modePipeline: 'Pipeline',
    modeLibrarian: 'Librarian',
    you: 'You',
    assistant: 'CodeWeaver',
    steps: 'Steps',
    stepsCount: 'Steps ({n})',
    rawSteps: 'Raw steps, for debugging ({n})',
    think: 'think',
    act: 'act',
    observe: 'observe',
    stepError: 'error',
    starting: 'Starting…',
    waiting: 'Waiting in line, position {n}',
    writing: 'Writing the answer…',
    sources: 'Sources',
    noSources: 'No sources were used.',
    noneCited: 'The answer cites none of the sources it found.',
    moreSources: '{n} more retrieved, not cited',
    retrievedSources: '{n} retrieved, not cited',
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
    confirmDeleteText: '이 대화를 삭제할까요? 되돌릴 수 없습니다.',
    confirmDelete: '삭제',
    cancel: '취소',
    switchLanguage: 'English',
    switchLanguageLabel: '인터페이스를 영어로 바꾸기',
    emptyState: '프로그래밍 질문을 입력하세요. 답변에는 출처가 붙습니다.',
    questionLabel: '질문',
    questionPlaceholder: '프로그래밍 질문을 입력하세요',
    questionHint: 'Enter 전송 · Shift+Enter 줄바꿈 · ``` 로 감싼 코드는 코드로 표시',
    send: '보내기',
    stop: '중지',
    modeLabel: '답변 방식',
    modeHint: '파이프라인은 모든 출처를 한 번에 검색하고, 사서는 단계별로 검색합니다',
    modePipeline: '파이프라인',
    modeLibrarian: '사서',
    you: '나',
    assistant: 'CodeWeaver',
    steps: '진행 단계',
    stepsCount: '진행 단계 ({n})',
    rawSteps: '디버깅용 원본 단계 ({n})',
    think: '생각',
    act: '실행',
    observe: '관찰',
    stepError: '오류',
    starting: '시작하는 중…',
    waiting: '대기 중, {n}번째',
    writing: '답변을 작성하는 중…',
    sources: '출처',
    noSources: '사용한 출처가 없습니다.',
    noneCited: '답변이 찾은 자료를 인용하지 않았습니다.',
    moreSources: '인용하지 않은 자료 {n}개 더 보기',
    retrievedSources: '찾았지만 인용하지 않은 자료 {n}개',
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

let lang = pickLanguage();

function pickLanguage() {
  const saved = storage.get(STORE.lang);
  if (saved === 'ko' || saved === 'en') return saved;
  return (navigator.language || '').toLowerCase().startsWith('ko') ? 'ko' : 'en';
}

/** Switch between English and Korean, remember the choice and re-translate the page. */
export function toggleLanguage() {
  lang = lang === 'ko' ? 'en' : 'ko';
  storage.set(STORE.lang, lang);
  applyLanguage();
}

/** The UI string `key` in the current language, with `{name}` placeholders filled. */
export function t(key, vars) {
  const text = STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

/** Give `el` a translatable text: it is re-translated when the language changes. */
export function setText(el, key, vars) {
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
export function setAttrText(el, attr, key, vars) {
  const slot = attrSlot(attr);
  el.dataset[slot] = key;
  if (vars) el.dataset[slot + 'Vars'] = JSON.stringify(vars);
  else delete el.dataset[slot + 'Vars'];
  el.setAttribute(attr, t(key, vars));
  return el;
}

/** Translate every marked text and attribute, and the times, into the current language. */
export function applyLanguage() {
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
  document.querySelector('#lang-toggle').lang = lang === 'ko' ? 'en' : 'ko';
  for (const el of document.querySelectorAll('time[data-epoch]')) {
    el.textContent = formatTime(Number(el.dataset.epoch));
  }
}

/** A date and time in the current language, the year only when it is not this year;
 * '' for a missing or broken value. */
export function formatTime(epochSeconds) {
  if (!Number.isFinite(epochSeconds)) return '';
  const locale = lang === 'ko' ? 'ko-KR' : 'en';
  const when = new Date(epochSeconds * 1000);
  const options = { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' };
  if (when.getFullYear() !== new Date().getFullYear()) options.year = 'numeric';
  return when.toLocaleString(locale, options);
}
