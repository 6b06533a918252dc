import type { Citation, Event, ReplayEvent, TodoItem, Usage } from '@kode/protocol'
import { distinctSources } from '@kode/protocol/helpers'
import { isPlainEnter } from './keys.js'
import { renderMarkdown } from './markdown.js'
import { revealedNodes } from './revealed.js'

/** What a session's stream carries: live events and replayed ones render the same way. */
export type StreamEvent = Event | ReplayEvent

/** One decision the page sends to `POST /sessions/:id/approvals`. */
export interface Decision {
  toolCallId: string
  /** The session the call waits in: the main one, or a sub-agent's (ids are unique per session only). */
  sessionId: string
  approved: boolean
  /** Why the user denied it; the model reads it. */
  reason?: string
}

/** The call that started a sub-agent, as a `sub-agents` frame names it. */
export interface ParentCall {
  sessionId: string
  toolCallId: string
}

/** A call waiting for the user (the main agent's or a sub-agent's): its block, and the choice once clicked. */
interface PendingApproval {
  sessionId: string
  toolCallId: string
  el: HTMLElement
  choice?: boolean
  /** The reason typed for a denial, taken when Deny is chosen. */
  reason?: string
}

/** The blocks one agent (the main one or a sub-agent) is writing into. */
interface Lane {
  root: HTMLElement
  text?: { el: HTMLElement; source: string }
  thinking?: { el: HTMLElement; source: string }
  /** Responses whose text or thinking arrived as deltas; a replay sends only `response_complete`. */
  streamed: Set<string>
}

/**
 * Renders a session's events into `root` with the CLI's display rules: the user's prompt,
 * thinking (collapsed), text as markdown, each tool call with its arguments and result,
 * sub-agents nested under the call that started them, usage per response and per task,
 * interrupts and errors. Everything from the stream is set as text (`textContent`) or through
 * the safe markdown renderer; nothing from the stream is ever parsed as HTML.
 */
export class Transcript {
  readonly #root: HTMLElement
  readonly #doc: Document
  #mainSessionId: string
  #lanes = new Map<string, Lane>()
  #tools = new Map<string, HTMLElement>()
  /** The call each replayed sub-agent belongs to (the server reads it from the stored sessions). */
  #parents = new Map<string, ParentCall>()
  /** By {@link #toolKey}: a sub-agent's `call_0` is not its parent's. */
  #approvals = new Map<string, PendingApproval>()
  #taskRunning = false
  readonly #decide: ((decisions: Decision[]) => void) | undefined

  /**
   * `decide` receives the user's decisions once every pending call (the main session's and its
   * sub-agents') has one and the main task has ended (the engine takes them together, on the main
   * session); without it, requests are notices.
   */
  constructor(root: HTMLElement, mainSessionId: string, decide?: (decisions: Decision[]) => void) {
    this.#root = root
    this.#doc = root.ownerDocument
    this.#mainSessionId = mainSessionId
    this.#decide = decide
  }

  /** Lets the user choose again: the decisions sent were refused (the reason is shown elsewhere). */
  decisionsFailed(): void {
    for (const pending of this.#approvals.values()) {
      pending.choice = undefined
      setControlsDisabled(pending.el, false)
      pending.el.querySelector('.choice')!.textContent = ''
    }
  }

  /** Forgets everything shown (the stream will send the whole session again). */
  reset(): void {
    this.#root.replaceChildren()
    this.#lanes.clear()
    this.#tools.clear()
    this.#approvals.clear()
    this.#parents.clear()
    this.#taskRunning = false
  }

  /**
   * Where replayed sub-agents go (`{ "<sub-agent session>": { sessionId, toolCallId } }`): a replay
   * has no `task_start` to link a sub-agent to its call. A sub-agent already shown outside its call
   * moves into it.
   */
  linkSubAgents(links: Readonly<Record<string, ParentCall>>): void {
    for (const [child, parent] of Object.entries(links)) {
      if (typeof parent?.sessionId !== 'string' || typeof parent.toolCallId !== 'string') continue
      this.#parents.set(child, { sessionId: parent.sessionId, toolCallId: parent.toolCallId })
      const sub = this.#lanes.get(child)?.root.parentElement
      const host = this.#tools.get(this.#toolKey(parent.sessionId, parent.toolCallId))
      if (sub && host && sub.parentElement === this.#root) this.#nest(sub, host)
    }
  }

  apply(event: StreamEvent): void {
    const lane = this.#lane(event)
    switch (event.type) {
      case 'user_message':
        this.#block(lane, 'user').textContent = event.content
        return
      case 'thinking_start': {
        const details = this.#block(lane, 'thinking', 'details')
        details.appendChild(this.#doc.createElement('summary')).textContent = 'Thinking'
        lane.thinking = { el: details.appendChild(this.#doc.createElement('div')), source: '' }
        return
      }
      case 'thinking_delta':
        lane.streamed.add(event.responseId ?? '')
        if (!lane.thinking) this.apply({ ...event, type: 'thinking_start' })
        lane.thinking!.source += event.content
        lane.thinking!.el.replaceChildren(renderMarkdown(lane.thinking!.source, this.#doc))
        return
      case 'thinking_end':
        lane.thinking = undefined
        return
      case 'assistant_text_start':
        lane.text = { el: this.#block(lane, 'text'), source: '' }
        return
      case 'assistant_text_delta':
        lane.streamed.add(event.responseId ?? '')
        if (!lane.text) lane.text = { el: this.#block(lane, 'text'), source: '' }
        lane.text.source += event.content
        lane.text.el.replaceChildren(renderMarkdown(lane.text.source, this.#doc))
        return
      case 'assistant_text_end':
        lane.text = undefined
        return
      case 'assistant_image_delta': {
        const url = event.url ?? ''
        if (!/^(https?:|data:image\/)/i.test(url)) return
        const img = this.#block(lane, 'image', 'img') as HTMLImageElement
        img.src = url
        img.alt = 'image from the model'
        return
      }
      case 'response_complete':
        // Live, the deltas showed it already. Replayed, this is the response's only text.
        if (!lane.streamed.has(event.responseId ?? '')) {
          if (event.thinkingText) {
            this.apply({ ...event, type: 'thinking_start' })
            this.apply({ ...event, type: 'thinking_delta', content: event.thinkingText })
            lane.thinking = undefined
          }
          if (event.content) {
            const text = this.#block(lane, 'text')
            text.replaceChildren(renderMarkdown(event.content, this.#doc))
          }
          lane.streamed.delete(event.responseId ?? '')
        }
        if (event.citations) this.#sources(lane, event.citations)
        return
      case 'tool_call_start':
        this.#tool(lane, event.sessionId, event.toolCallId, event.toolName)
        return
      case 'tool_call': {
        const tool = this.#tool(lane, event.sessionId, event.toolCallId, event.toolName)
        tool.querySelector(':scope > summary > .args')!.textContent = event.arguments
        return
      }
      case 'tool_progress': {
        const tool = this.#tool(lane, event.sessionId, event.toolCallId, event.toolName)
        tool.querySelector(':scope > .progress')!.textContent = event.message
        return
      }
      case 'tool_result': {
        const tool = this.#tool(lane, event.sessionId, event.toolCallId, event.toolName)
        tool.dataset.status = event.status
        tool.querySelector(':scope > summary > .status')!.textContent = event.status === 'success' ? '✓' : '✗'
        tool.querySelector(':scope > .result')!.textContent = event.result
        // A replayed sub-agent carries no link to its call until this result names its session.
        // A call that ran several sub-agents links them all (`moreSessionIds`), in the order they started.
        if (event.uiExtra?.type === 'session') {
          const { sessionId, moreSessionIds = [] } = event.uiExtra
          for (const id of [sessionId, ...moreSessionIds]) {
            const sub = this.#lanes.get(id)?.root.parentElement
            if (!sub || sub === this.#root) continue
            if (!tool.contains(sub)) this.#nest(sub, tool)
            const label = sub.querySelector(':scope > summary')
            if (label?.textContent === '⇢ sub-agent') label.textContent = `⇢ ${event.toolName}`
          }
        }
        return
      }
      case 'todo_change': {
        const list = this.#block(lane, 'todos', 'ul')
        for (const todo of event.todos) this.#todo(list, todo)
        return
      }
      case 'usage':
        this.#block(lane, 'usage').textContent = usageLine(event.usage, event.costUsd)
        return
      case 'task_metadata': {
        const { main, subAgents } = event.metadata
        if (event.sessionId !== this.#mainSessionId) {
          // A replayed sub-agent has no `task_start` to name it: its metadata does.
          const label = lane.root.parentElement?.querySelector(':scope > summary')
          if (label?.textContent === '⇢ sub-agent' && main.subAgentName)
            label.textContent = `⇢ ${main.subAgentName}`
          return
        }
        const cost = [main, ...subAgents].reduce((sum, m) => sum + (m.costUsd ?? 0), 0)
        const line = `task: ${main.turnCount ?? 0} turns${subAgents.length ? `, ${subAgents.length} sub-agent(s)` : ''}`
        // A task that failed before any response has no usage.
        this.#block(lane, 'task-usage').textContent = main.usage
          ? `${line} · ${usageLine(main.usage, cost)}`
          : line
        return
      }
      case 'interrupt':
        this.#block(lane, 'notice').textContent = '⏹ Interrupted'
        return
      case 'error':
        this.#block(lane, 'error').textContent = `✗ ${event.errorMessage}`
        return
      case 'tool_approval_request':
        // A sub-agent's request pauses the main task too, and is decided with the main session's
        // (each decision naming the session its call waits in).
        if (!this.#decide) {
          this.#block(lane, 'notice').textContent = `⚠ ${event.toolName} waits for approval`
          return
        }
        this.#approvalRequest(lane, event.sessionId, event.toolCallId, event.toolName, event.arguments)
        return
      case 'tool_approval_decision': {
        const key = this.#toolKey(event.sessionId, event.toolCallId)
        const pending = this.#approvals.get(key)
        this.#approvals.delete(key)
        if (pending) setControlsDisabled(pending.el, true)
        pending?.el.querySelector('.choice')?.replaceChildren()
        this.#block(lane, 'notice').textContent =
          `${event.approved ? '✓ approved' : '✗ denied'}: ${event.toolName}${event.reason ? ` (${event.reason})` : ''}`
        return
      }
      case 'compaction_end':
        // The older part of the session was summarised for the model; the page keeps showing it all.
        if (event.compacted) this.#block(lane, 'notice').textContent = '⇣ Context compacted'
        return
      case 'task_start':
        if (event.sessionId === this.#mainSessionId) this.#taskRunning = true
        return
      case 'task_finish':
        if (event.sessionId === this.#mainSessionId) {
          this.#taskRunning = false
          this.#sendDecisions()
        }
        return
      case 'developer_message':
      case 'turn_start':
      case 'turn_end':
      case 'context_usage':
      case 'compaction_start':
      case 'welcome':
      case 'end':
      case 'replay_history':
        return
      default: {
        // Compile time: every known type is handled. Run time: a type from a newer server is
        // skipped, as the protocol asks of consumers.
        const _unknown: never = event
        return
      }
    }
  }

  /** The lane of the event's session: a sub-agent's lives inside the tool call that started it. */
  #lane(event: StreamEvent): Lane {
    const sessionId = event.sessionId
    let lane = this.#lanes.get(sessionId)
    const state = event.type === 'task_start' ? event.subAgentState : undefined
    // Live, `task_start` names the call; replayed, the server's `sub-agents` frame does.
    const parent = state?.parentToolCallId
      ? { sessionId: state.parentSessionId, toolCallId: state.parentToolCallId }
      : this.#parents.get(sessionId)
    const host = (parent && this.#tools.get(this.#toolKey(parent.sessionId, parent.toolCallId))) || this.#root
    if (lane) {
      // A sub-agent shown before its call was known goes into it once known.
      const sub = lane.root.parentElement
      if (sub && sub.parentElement === this.#root && host !== this.#root) this.#nest(sub, host)
      if (sub && state) sub.querySelector(':scope > summary')!.textContent = `⇢ ${subAgentLabel(state)}`
      return lane
    }
    if (sessionId === this.#mainSessionId || sessionId === '') {
      lane = { root: this.#root, streamed: new Set() }
    } else {
      // A sub-agent's work is shown as it happens, like the CLI does: its call stays open.
      if (host !== this.#root) (host as HTMLDetailsElement).open = true
      // Before the call's result, where a replay shows it too.
      const details = host.insertBefore(
        this.#doc.createElement('details'),
        host.querySelector(':scope > .result'),
      )
      details.className = 'subagent'
      details.open = true
      details.dataset.sessionId = sessionId
      details.appendChild(this.#doc.createElement('summary')).textContent =
        `⇢ ${state ? subAgentLabel(state) : 'sub-agent'}`
      lane = { root: details.appendChild(this.#doc.createElement('div')), streamed: new Set() }
    }
    this.#lanes.set(sessionId, lane)
    return lane
  }

  /** Moves a sub-agent's block into the call that started it, before the call's result. */
  #nest(sub: HTMLElement, call: HTMLElement): void {
    ;(call as HTMLDetailsElement).open = true
    call.insertBefore(sub, call.querySelector(':scope > .result'))
  }

  /**
   * A request with Approve / Deny buttons and a field for why it is denied (Enter in it denies); all
   * of it built as elements and text.
   */
  #approvalRequest(lane: Lane, sessionId: string, toolCallId: string, toolName: string, args: string): void {
    const el = this.#block(lane, 'approval')
    el.dataset.toolCallId = toolCallId
    const label = el.appendChild(this.#doc.createElement('span'))
    label.textContent = `⚠ ${toolName} waits for approval: `
    el.appendChild(this.#doc.createElement('code')).append(...revealedNodes(args, this.#doc))
    const session = sessionId === '' ? this.#mainSessionId : sessionId
    const pending: PendingApproval = { sessionId: session, toolCallId, el }
    const reason = this.#doc.createElement('input')
    reason.type = 'text'
    reason.className = 'reason'
    reason.placeholder = 'why deny? (optional)'
    reason.setAttribute('aria-label', `Why ${toolName} is denied (optional, the model reads it)`)
    for (const [text, approved] of [
      ['Approve', true],
      ['Deny', false],
    ] as const) {
      const button = el.appendChild(this.#doc.createElement('button'))
      button.type = 'button'
      button.className = approved ? 'approve' : 'deny'
      button.textContent = text
      button.addEventListener('click', () => {
        if (pending.choice !== undefined) return
        pending.choice = approved
        const why = reason.value.trim()
        pending.reason = approved || why === '' ? undefined : why
        setControlsDisabled(el, true)
        el.querySelector('.choice')!.textContent = approved ? 'approving…' : 'denying…'
        this.#sendDecisions()
      })
    }
    el.appendChild(reason).addEventListener('keydown', (event) => {
      if (!isPlainEnter(event)) return
      event.preventDefault()
      el.querySelector<HTMLButtonElement>('button.deny')!.click()
    })
    el.appendChild(this.#doc.createElement('span')).className = 'choice'
    this.#approvals.set(this.#toolKey(session, toolCallId), pending)
  }

  /** Sends the decisions once every pending call has one and the task that asked has ended. */
  #sendDecisions(): void {
    if (this.#taskRunning || this.#approvals.size === 0) return
    const pending = [...this.#approvals.values()]
    if (pending.some((p) => p.choice === undefined)) return
    this.#decide?.(
      pending.map(({ toolCallId, sessionId, choice, reason }) => ({
        toolCallId,
        sessionId,
        approved: choice!,
        ...(reason !== undefined ? { reason } : {}),
      })),
    )
  }

  /**
   * The sources a response cited, each once, as a numbered list under its text: a title links to
   * its page only when the URL is an `http(s)` address (opened in a new tab, without a referrer).
   */
  #sources(lane: Lane, citations: readonly Citation[]): void {
    const sources = distinctSources(citations)
    if (sources.length === 0) return
    const list = this.#block(lane, 'sources', 'ol')
    for (const { title, url } of sources) {
      const item = list.appendChild(this.#doc.createElement('li'))
      const label = title ?? url ?? 'source'
      if (url !== undefined && /^https?:\/\//i.test(url)) {
        const a = item.appendChild(this.#doc.createElement('a'))
        a.href = url
        a.rel = 'noopener noreferrer nofollow'
        a.target = '_blank'
        a.textContent = label
      } else item.textContent = label
    }
  }

  #block(lane: Lane, kind: string, tag: 'div' | 'details' | 'ul' | 'ol' | 'img' = 'div'): HTMLElement {
    const el = lane.root.appendChild(this.#doc.createElement(tag))
    el.className = kind
    return el
  }

  /**
   * A call's key among the tools shown: its session and its id, since ids are unique within a
   * session only (a sub-agent's `call_0` is not its parent's).
   */
  #toolKey(sessionId: string, toolCallId: string): string {
    return JSON.stringify([sessionId === '' ? this.#mainSessionId : sessionId, toolCallId])
  }

  #tool(lane: Lane, sessionId: string, toolCallId: string, toolName: string): HTMLElement {
    const key = this.#toolKey(sessionId, toolCallId)
    let tool = this.#tools.get(key)
    if (tool) return tool
    tool = this.#block(lane, 'tool', 'details')
    tool.dataset.toolCallId = toolCallId
    const summary = tool.appendChild(this.#doc.createElement('summary'))
    summary.appendChild(this.#doc.createElement('span')).className = 'status'
    const name = summary.appendChild(this.#doc.createElement('span'))
    name.className = 'name'
    name.textContent = toolName
    summary.appendChild(this.#doc.createElement('code')).className = 'args'
    tool.appendChild(this.#doc.createElement('div')).className = 'progress'
    tool.appendChild(this.#doc.createElement('pre')).className = 'result'
    this.#tools.set(key, tool)
    return tool
  }

  #todo(list: HTMLElement, todo: TodoItem): void {
    const item = list.appendChild(this.#doc.createElement('li'))
    item.dataset.status = todo.status
    const mark = todo.status === 'completed' ? '☑' : todo.status === 'in_progress' ? '◐' : '☐'
    item.textContent = `${mark} ${todo.content}`
  }
}

/** Disables (or enables again) an approval's buttons and its reason field. */
function setControlsDisabled(approval: HTMLElement, disabled: boolean): void {
  for (const control of approval.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input'))
    control.disabled = disabled
}

function subAgentLabel(state: { name: string; description?: string }): string {
  return `${state.name}${state.description ? `: ${state.description}` : ''}`
}

function usageLine(usage: Usage, costUsd: number | undefined): string {
  const parts = [`${usage.inputTokens ?? 0} in`, `${usage.outputTokens ?? 0} out`]
  if (usage.cacheReadTokens) parts.push(`${usage.cacheReadTokens} cached`)
  if (costUsd !== undefined) parts.push(`$${costUsd.toFixed(4)}`)
  return parts.join(' · ')
}
