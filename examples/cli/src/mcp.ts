import { resolve } from 'node:path'
import type { Agent, Tool } from '@kode/core'
import { connectMcpServer, type McpConnection, type McpServerOptions } from '@kode/mcp'
import { cutText } from '@kode/protocol/helpers'
import type { McpServerConfig } from './config.js'

/**
 * One configured MCP server: connected, or why not (`error`). `lost`: it was connected and went
 * away (its process exited, its connection dropped); `reconnect` tries it again.
 */
export type McpServerStatus =
  | { name: string; connection: McpConnection; error?: undefined; lost?: undefined }
  | { name: string; connection?: undefined; error: string; lost?: boolean }

/** The configured MCP servers of a run, and the agents that get their tools. */
export interface McpServers {
  readonly servers: readonly McpServerStatus[]
  /** Every connected server's tools, in the config's order. */
  tools(): Tool[]
  /** Keeps `agent`'s tools current when a server's list changes (`all()` builds the full list). */
  follow(agent: Agent, all: () => readonly Tool[]): void
  /**
   * Connects again each server that went away since it was connected (not one that never
   * connected: its config is wrong, and trying it before every task would only repeat that), and
   * offers the followed agents its tools again. Resolves with a notice per server tried.
   */
  reconnect(): Promise<string[]>
  /** Closes every connection, stopping the servers' processes. */
  close(): Promise<void>
}

/**
 * Connects every configured server at once. One that fails does not stop kode: its error is kept
 * for `/tools` and the start-up notice, and the others work. `cwd` resolves relative `cwd`s.
 */
export async function connectServers(
  config: Readonly<Record<string, McpServerConfig>> | undefined,
  cwd: string,
): Promise<McpServers> {
  const entries = Object.entries(config ?? {})
  const followed: { agent: Agent; all: () => readonly Tool[] }[] = []
  const offerTools = () => {
    for (const { agent, all } of followed) agent.setTools(all())
  }
  let closing = false
  const servers: McpServerStatus[] = await Promise.all(
    entries.map(async ([name, server]): Promise<McpServerStatus> => {
      try {
        return { name, connection: await connectMcpServer(optionsOf(name, server, cwd)) }
      } catch (error) {
        return { name, error: (error as Error).message }
      }
    }),
  )
  /** Follows server `i`'s connection: its list changes, and its going away. */
  const watch = (i: number, connection: McpConnection) => {
    connection.onToolsChanged(offerTools)
    connection.onClose((error) => {
      if (closing || servers[i]?.connection !== connection) return
      servers[i] = { name: servers[i].name, error: error?.message ?? 'the connection closed', lost: true }
      // Its tools answer every call with the error until it is back: leave them out meanwhile.
      offerTools()
    })
  }
  servers.forEach((server, i) => {
    if (server.connection) watch(i, server.connection)
  })
  return {
    servers,
    tools: () => servers.flatMap((s) => s.connection?.tools ?? []),
    follow(agent, all) {
      if (servers.some((s) => s.connection || s.lost)) followed.push({ agent, all })
    },
    async reconnect() {
      const notices = await Promise.all(
        servers.map(async (server, i): Promise<string | undefined> => {
          if (!server.lost || closing) return undefined
          try {
            const connection = await connectMcpServer(optionsOf(server.name, config![server.name]!, cwd))
            if (closing) {
              await connection.close()
              return undefined
            }
            servers[i] = { name: server.name, connection }
            watch(i, connection)
            return `MCP server ${server.name} went away and is connected again`
          } catch (error) {
            servers[i] = { name: server.name, error: (error as Error).message, lost: true }
            return `MCP server ${server.name} went away and could not be connected again: ${(error as Error).message}`
          }
        }),
      )
      if (notices.some((notice) => notice !== undefined)) offerTools()
      return notices.filter((notice) => notice !== undefined)
    },
    close: async () => {
      closing = true
      await Promise.all(servers.map((s) => s.connection?.close()))
    },
  }
}

function optionsOf(name: string, server: McpServerConfig, cwd: string): McpServerOptions {
  if ('url' in server)
    return { name, url: server.url, ...(server.headers ? { headers: server.headers } : {}) }
  return {
    name,
    command: server.command,
    ...(server.args ? { args: server.args } : {}),
    ...(server.env ? { env: server.env } : {}),
    cwd: resolve(cwd, server.cwd ?? '.'),
  }
}

/** The `/tools` listing: the built-in tools, then each server's tools or why it is missing. */
export function toolLines(builtin: readonly Tool[], mcp: McpServers | undefined): string[] {
  const line = (tool: Tool) => `  ${tool.name.padEnd(36)}${firstLine(tool.description)}`
  const lines = ['Built-in tools:', ...builtin.map(line)]
  for (const server of mcp?.servers ?? []) {
    if (server.connection) {
      const { tools, transport } = server.connection
      lines.push(`MCP server ${server.name} (${transport}, ${tools.length} tools):`, ...tools.map(line))
    } else if (server.lost) lines.push(`MCP server ${server.name}: went away: ${server.error}`)
    else lines.push(`MCP server ${server.name}: not connected: ${server.error}`)
  }
  return lines
}

function firstLine(text: string): string {
  const first = text.split('\n')[0] ?? ''
  return cutText(first, 70)
}
