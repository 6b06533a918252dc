import { join } from 'node:path'
import type { App } from './app.js'
import type { DecideApprovals } from './approvals/decide.js'
import { runWithApprovals } from './approvals/run-with-approvals.js'
import { DisplayController } from './display/controller.js'
import { CommandRenderer, type TerminalOutput } from './display/renderer.js'
import type { Style } from './display/style.js'
import { terminalSafe } from './display/terminal-safe.js'
import { exitCodeOf } from './exec.js'
import { scriptedNotice } from './repl/repl.js'
import { DEMO_PROMPT } from './scripted/script.js'
import { exportSession } from './sessions.js'

/**
 * The README's first command: one real agent task, shown live. Without a key it runs against
 * the local scripted model and says so; with one, the same prompt goes to the real model. The
 * session is persisted and exported to HTML.
 */
export async function runDemo(
  app: App,
  terminal: { output: TerminalOutput; style: Style; live: boolean },
  signal: AbortSignal,
  decide: DecideApprovals,
): Promise<number> {
  const { output, style } = terminal
  const say = (text: string) => output.write(`${text}\n`)
  // What it names came from config or the file system (a project's config may name the sessions
  // dir, a directory name may hold escape sequences): only the demo's own colours may drive the terminal.
  const named = terminalSafe
  const agent = app.agent()
  const renderer = new CommandRenderer(output, { style, live: terminal.live, thinking: app.thinking })
  const display = new DisplayController(agent.sessionId, renderer)
  display.handle({
    type: 'welcome',
    sessionId: agent.sessionId,
    timestamp: Date.now(),
    workDir: app.cwd,
    model: app.model.client.model,
    provider: app.model.client.provider,
  })
  say(
    style.yellow(
      app.model.offline
        ? scriptedNotice(app.model.offline)
        : `Running the demo task against ${named(app.model.label)}.`,
    ),
  )
  say('')
  say(style.bold(`› ${DEMO_PROMPT}`))
  const modelSettings = app.model.modelSettings
  const run = agent.run(DEMO_PROMPT, { signal, modelSettings })
  const outcome = await runWithApprovals(agent, run, {
    signal,
    modelSettings,
    // The live area is cleared before a question, so it is not drawn over.
    decide: (pending, abort) => {
      renderer.clear()
      return decide(pending, abort)
    },
    onEvent: (event) => display.handle(event),
  })
  renderer.clear()
  await app.titleSession(agent.sessionId, DEMO_PROMPT)
  const file = await exportSession(
    app.store,
    agent.sessionId,
    join(app.exportsDir, `${agent.sessionId}.html`),
    { followLink: false },
  )
  say('')
  say(`Session ${agent.sessionId} saved in ${named(app.sessionsDir)}`)
  say(`HTML transcript: ${named(file)}`)
  say(
    style.dim(
      `Continue it with: ${named(app.resumeCommand(agent.sessionId))}  (in this repository: pnpm kode --resume …)`,
    ),
  )
  return exitCodeOf(outcome.reason)
}
