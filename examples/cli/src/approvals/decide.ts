import type { ApprovalDecision, PendingApproval } from '@kode/core'
import { type MarkEscape, revealHidden } from '../display/reveal.js'
import { describeCall } from './describe.js'

/**
 * Decides the calls a task waits on; resolves `undefined` when the user gave up deciding (Ctrl-C,
 * end of input): the calls then stay pending in the session, and the next message denies them.
 */
export type DecideApprovals = (
  pending: readonly PendingApproval[],
  signal: AbortSignal,
) => Promise<ApprovalDecision[] | undefined>

/** The reason recorded for calls `--yes` approved. */
export const APPROVED_BY_FLAG = 'approved by --yes'

/** The reason given to the model for calls denied because no one can be asked. */
export const NO_TERMINAL_REASON =
  'kode runs without a terminal, so it cannot ask the user; rerun with --yes to allow write_file, edit_file and bash'

/** `--yes`: every call is approved, and the history says by what. */
export function approveAll(): DecideApprovals {
  return async (pending) =>
    pending.map((call) => ({ ...answering(call), approved: true, reason: APPROVED_BY_FLAG }))
}

/**
 * No terminal and no `--yes`: every call is denied with {@link NO_TERMINAL_REASON} (the model
 * reads it and can tell the user), and `notify` says so on stderr. Never waits for input.
 */
export function denyAll(notify: (line: string) => void): DecideApprovals {
  return async (pending) =>
    pending.map((call) => {
      notify(`denied ${call.toolName}: no terminal to ask for approval (pass --yes to allow it)`)
      return { ...answering(call), approved: false, reason: NO_TERMINAL_REASON }
    })
}

/** One line of the user's answer; `undefined` when they gave up (Ctrl-C, end of input). */
export type AskLine = (signal: AbortSignal) => Promise<string | undefined>

/** What the interactive prompt asks. */
export const APPROVAL_QUESTION =
  'Allow? y = yes, a = yes to every call of this tool, n = no, or type why not:'

/**
 * Asks on the terminal, call by call: `print` shows what the call would do (lines safe to write
 * as they are: what the model wrote in them is revealed, its escapes marked with `mark`; see
 * `describeCall`), `ask` reads the answer. `y`/`yes` approves; `a`/`always` approves this tool
 * for the rest of the session (later calls of it are approved without asking); `n`/`no` or an
 * empty line denies; any other text denies with that text as the reason the model reads.
 */
export function askEach(io: {
  print(lines: string[]): void
  ask: AskLine
  mark?: MarkEscape
}): DecideApprovals {
  const alwaysAllowed = new Set<string>()
  return async (pending, signal) => {
    const decisions: ApprovalDecision[] = []
    for (const call of pending) {
      if (alwaysAllowed.has(call.toolName)) {
        io.print([
          `${revealHidden(call.toolName, io.mark)}: approved (you allowed every call of it this session)`,
        ])
        decisions.push({ ...answering(call), approved: true, reason: 'allowed for the session' })
        continue
      }
      io.print([...describeCall(call, io.mark), APPROVAL_QUESTION])
      const answer = await io.ask(signal)
      if (answer === undefined) return undefined
      decisions.push(decisionOf(call, answer.trim(), alwaysAllowed))
    }
    return decisions
  }
}

function decisionOf(call: PendingApproval, answer: string, alwaysAllowed: Set<string>): ApprovalDecision {
  const answered = answering(call)
  switch (answer.toLowerCase()) {
    case 'y':
    case 'yes':
      return { ...answered, approved: true }
    case 'a':
    case 'always':
      alwaysAllowed.add(call.toolName)
      return { ...answered, approved: true, reason: 'allowed for the session' }
    case '':
    case 'n':
    case 'no':
      return { ...answered, approved: false }
    default:
      return { ...answered, approved: false, reason: answer }
  }
}

/**
 * Which call a decision answers: its id, and the session it waits in when that is a sub-agent's.
 * Call ids are unique within a session only, and the engine refuses a decision on an id that
 * waits in several sessions unless it names one.
 */
function answering(call: PendingApproval): Pick<ApprovalDecision, 'toolCallId' | 'sessionId'> {
  return call.sessionId === undefined
    ? { toolCallId: call.toolCallId }
    : { toolCallId: call.toolCallId, sessionId: call.sessionId }
}
