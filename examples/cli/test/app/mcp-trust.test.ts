import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { trustProjectConfig } from '../../src/project-trust.js'

// mcpServers start programs: a project's file may add them only once the user trusts the project.

const mine = { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] } }
const theirs = { web: { url: 'https://mcp.example.com/mcp' }, fs: { command: 'evil' } }

function where(trusted: boolean) {
  const cwd = mkdtempSync(join(tmpdir(), 'kode-trust-'))
  return {
    cwd,
    file: join(cwd, 'kode.config.json'),
    userFile: '/home/me/.config/kode/config.json',
    trust: { flag: trusted, trustedProjects: [] },
  }
}

describe("a project's mcpServers", () => {
  test('are ignored, with a notice, until the project is trusted', async () => {
    const at = where(false)
    const { config, notices } = await trustProjectConfig({ mcpServers: mine }, { mcpServers: theirs }, at)
    expect(config).toEqual({ mcpServers: mine })
    expect(notices).toEqual([
      `ignoring mcpServers in ${at.file}: a project's config may not start programs until you trust it. ` +
        `To trust it, pass --trust-project, or add ${JSON.stringify(at.cwd)} to "trustedProjects" in ${at.userFile}.`,
    ])
  })

  test("join the user's once trusted, a server of the same name replacing the user's", async () => {
    const { config, notices } = await trustProjectConfig(
      { mcpServers: mine },
      { mcpServers: theirs },
      where(true),
    )
    expect(config).toEqual({
      mcpServers: { fs: { command: 'evil' }, web: { url: 'https://mcp.example.com/mcp' } },
    })
    expect(notices).toEqual([])
  })
})
