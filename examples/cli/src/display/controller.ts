import type { Event, ReplayEvent } from '@kode/protocol'
import type { RenderCommand } from './render-commands.js'
import { DisplayStateMachine, type EventOrigin, type SessionRole } from './state-machine.js'

/** Executes render commands: a {@link CommandRenderer}, or a list in tests. */
export interface RenderTarget {
  render(command: RenderCommand): void
}

/**
 * The display controller: routes every event to the state machine of its session (made on
 * first sight) and hands the resulting commands to the renderer. The session the user talks to is
 * the main one; a session whose `task_start` carries `subAgentState` is a sub-agent's, shown as
 * status lines in a colour of its own. A `replay_history` event is unpacked and its events go
 * through the same machines, marked as replayed.
 */
export class DisplayController {
  readonly #machines = new Map<string, DisplayStateMachine>()
  readonly #target: RenderTarget
  #mainSessionId: string
  #colors = 0
  /** Sub-agent names learned from a replay, before their sessions' events arrive. */
  #replayNames = new Map<string, string>()
  /** Sub-agent sessions still running, by the parent's tool call that spawned them. */
  #runningChildren = new Map<string, string>()
  /**
   * A parent's tool results that arrived while the sub-agent they ran was still winding down (an
   * interrupt ends the parent's call first): shown after the sub-agent's last line, so the lines
   * read child first, then the call that ran it, then the parent's interrupt.
   */
  #heldResults = new Map<string, { event: Event; origin: EventOrigin }>()

  constructor(mainSessionId: string, target: RenderTarget) {
    this.#mainSessionId = mainSessionId
    this.#target = target
  }

  /** The session treated as the main one. */
  get mainSessionId(): string {
    return this.#mainSessionId
  }

  /** Switches the main session (resume, fork): machines of other sessions are dropped. */
  setMainSession(sessionId: string): void {
    this.#mainSessionId = sessionId
    this.#machines.clear()
    this.#replayNames.clear()
    this.#runningChildren.clear()
    this.#heldResults.clear()
  }

  /** The machine of a session, if it has seen events. */
  machine(sessionId: string): DisplayStateMachine | undefined {
    return this.#machines.get(sessionId)
  }

  /** Routes one event. */
  handle(event: Event, origin: EventOrigin = 'live'): void {
    if (event.type === 'end') {
      this.#target.render({ type: 'shutdown', sessionId: event.sessionId })
      return
    }
    if (event.type === 'replay_history') {
      this.#replay(event.events)
      return
    }
    if (event.type === 'tool_result' && this.#runningChildren.has(event.toolCallId)) {
      this.#heldResults.set(event.toolCallId, { event, origin })
      return
    }
    // Anything else the parent says (its interrupt, its next turn) comes after what it held.
    if (event.type !== 'task_start' || !event.subAgentState) this.#releaseHeldOf(event.sessionId)
    const machine = this.#machineOf(event.sessionId)
    if (event.type === 'task_start' && event.subAgentState && event.sessionId !== this.#mainSessionId) {
      const { name, description, parentToolCallId } = event.subAgentState
      machine.setRole(this.#subAgentRole(machine, name, description))
      if (parentToolCallId !== undefined) this.#runningChildren.set(parentToolCallId, event.sessionId)
    }
    for (const command of machine.handle(event, origin)) this.#target.render(command)
    if (event.type === 'task_finish') this.#childFinished(event.sessionId)
  }

  /** A sub-agent's task ended: the parent's result of the call that ran it may show now. */
  #childFinished(sessionId: string): void {
    for (const [callId, child] of this.#runningChildren) {
      if (child !== sessionId) continue
      this.#runningChildren.delete(callId)
      const held = this.#heldResults.get(callId)
      if (held) {
        this.#heldResults.delete(callId)
        this.handle(held.event, held.origin)
      }
    }
  }

  /** Shows the results `sessionId` held back, before its next event. */
  #releaseHeldOf(sessionId: string): void {
    for (const [callId, held] of this.#heldResults) {
      if (held.event.sessionId !== sessionId) continue
      this.#heldResults.delete(callId)
      this.#runningChildren.delete(callId)
      this.handle(held.event, held.origin)
    }
  }

  #replay(events: readonly ReplayEvent[]): void {
    // Replay carries no task_start: a parent's tool result linking a child session names it.
    for (const event of events) {
      if (event.type === 'tool_result' && event.uiExtra?.type === 'session') {
        // A call that ran several sub-agents links them all (`moreSessionIds`).
        const { sessionId, moreSessionIds = [] } = event.uiExtra
        for (const id of [sessionId, ...moreSessionIds]) this.#replayNames.set(id, event.toolName)
      }
    }
    for (const event of events) this.handle(event, 'replay')
  }

  #machineOf(sessionId: string): DisplayStateMachine {
    let machine = this.#machines.get(sessionId)
    if (!machine) {
      machine = new DisplayStateMachine(sessionId, { kind: 'main' })
      // Any session but the main one belongs to a sub-agent, even before its task_start names it.
      if (sessionId !== this.#mainSessionId) {
        machine.setRole(this.#subAgentRole(machine, this.#replayNames.get(sessionId) ?? 'sub-agent'))
      }
      this.#machines.set(sessionId, machine)
    }
    return machine
  }

  #subAgentRole(machine: DisplayStateMachine, name: string, description?: string): SessionRole {
    const color = machine.role.kind === 'sub_agent' ? machine.role.color : this.#colors++
    return description === undefined
      ? { kind: 'sub_agent', name, color }
      : { kind: 'sub_agent', name, description, color }
  }
}
