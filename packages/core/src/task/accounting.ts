import {
  type AssistantMessage,
  addUsage,
  type TaskMetadata,
  type TaskMetadataSummary,
  type Usage,
} from '@kode/protocol'

/** One task's accounting: responses, turns, cost and time, plus the sub-agents it ran. */
export class TaskAccounting {
  readonly #sessionId: string
  readonly #subAgentName: string | undefined
  readonly #now: () => number
  readonly #startedAt: number
  #turns = 0
  #usage: Usage | undefined
  #costUsd: number | undefined
  #model: string | undefined
  #provider: string | undefined
  readonly #subAgents: TaskMetadata[] = []

  constructor(sessionId: string, now: () => number, subAgentName: string | undefined) {
    this.#sessionId = sessionId
    this.#now = now
    this.#subAgentName = subAgentName
    this.#startedAt = now()
  }

  countTurn(): void {
    this.#turns++
  }

  /** Adds a response's usage and cost; the last response names the model and provider. */
  addResponse(message: AssistantMessage): void {
    if (message.usage) this.#usage = this.#usage ? addUsage(this.#usage, message.usage) : { ...message.usage }
    if (message.costUsd !== undefined) this.#costUsd = (this.#costUsd ?? 0) + message.costUsd
    if (message.model !== undefined) this.#model = message.model
    if (message.provider !== undefined) this.#provider = message.provider
  }

  /** Records a sub-agent's task, with the sub-agents it ran in turn (flattened). */
  addSubAgent(summary: TaskMetadataSummary): void {
    // A loop, not a spread: spreading some 150,000 items into one call overflows the stack.
    this.#subAgents.push(summary.main)
    for (const subAgent of summary.subAgents) this.#subAgents.push(subAgent)
  }

  summary(): TaskMetadataSummary {
    const main: TaskMetadata = { sessionId: this.#sessionId }
    if (this.#subAgentName !== undefined) main.subAgentName = this.#subAgentName
    if (this.#model !== undefined) main.model = this.#model
    if (this.#provider !== undefined) main.provider = this.#provider
    if (this.#usage !== undefined) main.usage = this.#usage
    if (this.#costUsd !== undefined) main.costUsd = this.#costUsd
    main.durationMs = Math.max(0, this.#now() - this.#startedAt)
    main.turnCount = this.#turns
    return { main, subAgents: [...this.#subAgents] }
  }
}
