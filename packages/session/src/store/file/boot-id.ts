import { readFile } from 'node:fs/promises'

/**
 * Reads the id of the host's current boot, new at every boot; `undefined` where there is none to
 * read. Injected into the lock so that tests can play another boot.
 */
export type BootIdReader = () => Promise<string | undefined>

/** Where Linux keeps the current boot's id (a random UUID drawn at boot). */
const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id'

/** Linux's boot id; `undefined` on other systems, or where it cannot be read (no `/proc`). */
export const readBootId: BootIdReader = async () => {
  if (process.platform !== 'linux') return undefined
  try {
    const id = (await readFile(BOOT_ID_FILE, 'utf8')).trim()
    return id === '' ? undefined : id
  } catch {
    return undefined
  }
}
