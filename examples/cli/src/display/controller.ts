import type { Event, ReplayEvent } from '@kode/protocol'
import type { RenderCommand } from './render-commands.js'
import { DisplayStateMachine, type EventOrigin, type SessionRole } from './state-machine.js'

/** Executes render commands: a {@link CommandRenderer}, or a list in tests. */
export interface RenderTarget {
  render(command: RenderCommand): void
}

/**
 * Seed 001's display controller: routes every event to the state machine of its session (made on
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
    const machine = this.#machineOf(event.sessionId)
    if (event.type === 'task_start' && event.subAgentState && event.sessionId !== this.#mainSessionId) {
      const { name, description } = event.subAgentState
      machine.setRole(this.#subAgentRole(machine, name, description))
    }
    for (const command of machine.handle(event, origin)) this.#target.render(command)
  }

  #replay(events: readonly ReplayEvent[]): void {
    // Replay carries no task_start: a parent's tool result linking a child session names it.
    for (const event of events) {
      if (event.type === 'tool_result' && event.uiExtra?.type === 'session')
        this.#replayNames.set(event.uiExtra.sessionId, event.toolName)
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
