import { isPlainEnter } from './keys.js'
import { type Decision, type ParentCall, type StreamEvent, Transcript } from './transcript.js'

// The page: a session list, a transcript fed by the session's SSE stream (with Approve / Deny on
// tool calls that wait for the user), a prompt and a Stop button. The session in view is in the URL (`?session=<id>`), so a reload opens it again; the
// server sends everything the stream holds, and EventSource resumes with Last-Event-ID after a
// dropped connection.

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const transcriptEl = $('transcript')
const statusEl = $('status')
const input = $<HTMLTextAreaElement>('input')
const stop = $<HTMLButtonElement>('stop')
const send = $<HTMLButtonElement>('send')

let source: EventSource | undefined
let sessionId = new URLSearchParams(location.search).get('session') ?? undefined
let running = false

interface SessionRow {
  id: string
  title?: string
  updatedAt: number
}

function setRunning(value: boolean): void {
  running = value
  stop.disabled = !value
  send.disabled = value
  statusEl.dataset.state = value ? 'running' : 'idle'
  statusEl.textContent = value ? 'working…' : ''
}

async function refreshSessions(): Promise<void> {
  const response = await attempt(() => fetch('/sessions'))
  if (typeof response === 'string') {
    statusEl.textContent = response
    return
  }
  const { model, sessions } = (await response.json()) as { model: string; sessions: SessionRow[] }
  $('model').textContent = model
  const list = $('sessions')
  list.replaceChildren(
    ...sessions.map((row) => {
      const li = document.createElement('li')
      const a = li.appendChild(document.createElement('a'))
      a.href = `?session=${encodeURIComponent(row.id)}`
      a.textContent = row.title ?? row.id
      a.title = `${row.id} · ${new Date(row.updatedAt).toLocaleString()}`
      a.dataset.sessionId = row.id
      if (row.id === sessionId) a.setAttribute('aria-current', 'true')
      a.addEventListener('click', (event) => {
        event.preventDefault()
        open(row.id)
      })
      return li
    }),
  )
}

/** Shows session `id`: its whole stream from the start, then what comes live. */
function open(id: string): void {
  source?.close()
  sessionId = id
  history.replaceState(null, '', `?session=${encodeURIComponent(id)}`)
  $('title').textContent = id
  const transcript: Transcript = new Transcript(
    transcriptEl,
    id,
    (approvals: Decision[]) => void decide(id, approvals, transcript),
  )
  transcript.reset()
  setRunning(false)
  follow(id, transcript)
  for (const a of document.querySelectorAll<HTMLAnchorElement>('#sessions a')) {
    a.toggleAttribute('aria-current', a.dataset.sessionId === id)
  }
}

const LOST = 'Lost the connection to the server; trying again…'

/**
 * Reads session `id`'s stream into `transcript`, after the event `lastEventId` when given. An
 * EventSource reconnects by itself after a dropped connection, but gives up for good on an answer
 * that is not a stream (a proxy's error page while the server restarts, a server error): then the
 * page says so and reads again, resuming after the last event it showed.
 */
function follow(id: string, transcript: Transcript, lastEventId?: string): void {
  const query = lastEventId ? `?lastEventId=${encodeURIComponent(lastEventId)}` : ''
  const current = new EventSource(`/sessions/${encodeURIComponent(id)}/events${query}`)
  source = current
  current.onopen = () => {
    if (statusEl.textContent === LOST) statusEl.textContent = running ? 'working…' : ''
  }
  current.onerror = () => {
    if (current.readyState !== EventSource.CLOSED) return
    statusEl.textContent = LOST
    setTimeout(() => {
      // Unless another session was opened meanwhile.
      if (source === current) follow(id, transcript, transcriptEl.dataset.lastEventId)
    }, 1_000)
  }
  current.onmessage = (message) => {
    const event = JSON.parse(message.data) as StreamEvent
    transcript.apply(event)
    if (event.sessionId === id) {
      if (event.type === 'task_start') setRunning(true)
      if (event.type === 'task_finish') {
        setRunning(false)
        void refreshSessions()
      }
    }
    transcriptEl.dataset.lastEventId = message.lastEventId
    transcriptEl.scrollTop = transcriptEl.scrollHeight
  }
  // The calls replayed sub-agents belong to, which a replay's events do not say: before those events.
  current.addEventListener('sub-agents', (message) => {
    transcript.linkSubAgents(JSON.parse(message.data) as Record<string, ParentCall>)
  })
  // The server could not place our Last-Event-ID (it restarted, or a new task began), or the log
  // started over: start over. A deleted session ended any task of ours in it: say so.
  current.addEventListener('reset', (message) => {
    transcript.reset()
    // Idle until the log says a task runs: a task the server was running when it died never
    // sends its task_finish, and a server running one sends its task_start again.
    setRunning(false)
    const { deleted, stoppedTask } = JSON.parse(message.data) as { deleted?: boolean; stoppedTask?: boolean }
    if (!deleted) return
    statusEl.textContent = stoppedTask
      ? 'This session was deleted; the task running in it here was stopped.'
      : 'This session was deleted.'
    void refreshSessions()
  })
}

/** Sends the user's decisions on pending tool calls; the continued task arrives on the stream. */
async function decide(id: string, approvals: Decision[], transcript: Transcript): Promise<void> {
  setRunning(true)
  const response = await attempt(() => post(`/sessions/${encodeURIComponent(id)}/approvals`, { approvals }))
  if (typeof response === 'string') {
    setRunning(false)
    statusEl.textContent = response
    transcript.decisionsFailed()
  }
}

const UNREACHABLE = 'Could not reach the server; try again once it is back.'

/**
 * Sends a request: its response when the server accepted it, else what to tell the user (the
 * server's refusal, or that it could not be reached: it is down or restarting).
 */
async function attempt(request: () => Promise<Response>): Promise<Response | string> {
  try {
    const response = await request()
    return response.ok ? response : await errorOf(response)
  } catch {
    return UNREACHABLE
  }
}

/** The `error` of a refused request, or its status when the body is not the server's JSON (a proxy's page). */
async function errorOf(response: Response): Promise<string> {
  try {
    return ((await response.json()) as { error: string }).error
  } catch {
    return `The server answered ${response.status}.`
  }
}

/** A POST, always typed as JSON (the server refuses any other: another site's form cannot send it). */
async function post(path: string, body?: unknown): Promise<Response> {
  return fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  })
}

$('prompt').addEventListener('submit', async (event) => {
  event.preventDefault()
  const text = input.value.trim()
  if (!text || running) return
  // Busy from the click on, not from the first event: no second submit slips in while the
  // session is created, and the status never reads idle for a prompt already sent.
  setRunning(true)
  // Refused, or the server is down (a restart): the prompt is kept, to send again.
  const failed = (why: string) => {
    setRunning(false)
    statusEl.textContent = why
  }
  if (!sessionId) {
    const created = await attempt(() => post('/sessions'))
    if (typeof created === 'string') return failed(created)
    open(((await created.json()) as { id: string }).id)
    setRunning(true)
  }
  const response = await attempt(() => post(`/sessions/${encodeURIComponent(sessionId!)}/messages`, { text }))
  if (typeof response === 'string') return failed(response)
  if (input.value.trim() === text) input.value = ''
  void refreshSessions()
})

input.addEventListener('keydown', (event) => {
  if (isPlainEnter(event)) {
    event.preventDefault()
    $<HTMLFormElement>('prompt').requestSubmit()
  }
})

stop.addEventListener('click', async () => {
  if (!sessionId) return
  // The task's events say when it stopped; a request refused or not delivered is told here.
  const response = await attempt(() => post(`/sessions/${encodeURIComponent(sessionId!)}/interrupt`))
  if (typeof response === 'string') statusEl.textContent = response
})

$('new-session').addEventListener('click', async () => {
  const response = await attempt(() => post('/sessions'))
  if (typeof response === 'string') {
    // The session in view stays: there is no new one to show.
    statusEl.textContent = response
    return
  }
  const { id } = (await response.json()) as { id: string }
  open(id)
  input.focus()
})

if (sessionId) open(sessionId)
void refreshSessions()
