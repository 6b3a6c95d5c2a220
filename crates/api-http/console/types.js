// @ts-check
// The API answers the console reads, as JSDoc types for `tsc --checkJs` (scripts/console-check.sh).
// They describe the public routes' JSON (docs/api.md); nothing here runs.

/**
 * @typedef {object} ErrorEnvelope
 * @property {false} success
 * @property {{ code: string, message: string }} error
 * @property {string} [requestId]
 */

/**
 * @typedef {object} Whoami
 * @property {'developer' | 'server' | 'member'} credentialType
 * @property {string} keyId
 * @property {string | null} name
 * @property {{ id: string, name: string }} organization
 * @property {{ id: string, cfxId: string, name: string | null } | null} server
 * @property {{ cdn: string[], logs: string[] }} permissions
 * @property {{ allowedPrefixes: string[], deniedPrefixes: string[] }} restrictions
 * @property {string[] | null} allowedMimeTypes
 * @property {string | null} expiresAt
 * @property {{ id: string, login: string, displayName: string | null, role: string }} [member]
 */

/**
 * @typedef {object} Session
 * @property {string} csrfToken
 * @property {{ id: string, login: string, organizationId: string,
 *   organizations: { id: string, name: string, role: string }[] }} [member]
 */

/**
 * @typedef {object} Grant
 * @property {string} role
 * @property {string[] | null} servers
 * @property {string[]} allowPaths
 * @property {string[]} denyPaths
 */

/**
 * @typedef {Grant & { id: string, login: string, displayName: string | null, joinedAt: string,
 *   credentialsInReach: boolean }} Member
 * @typedef {Grant & { id: string, note: string | null, expiresAt: string, expired: boolean }} PendingInvitation
 * @typedef {{ members: Member[], invitations: PendingInvitation[] }} MemberList
 */

/**
 * @typedef {object} Overview
 * @property {{ id: string, name: string }} organization
 * @property {{ name: string, logsEnabled: boolean, retentionDays: number, maxFileSize: number,
 *   maxUrlLifetimeSeconds: number, concurrentSearches: number }} plan
 * @property {{ month: string, logEvents: number, objects: number, storageBytes: number }} usage
 * @property {OverviewServer[]} servers
 */

/**
 * @typedef {object} OverviewServer
 * @property {string} id
 * @property {string} cfxId
 * @property {string | null} name
 * @property {boolean} logsActive
 * @property {string | null} [lastEventAt]
 * @property {number | null} [errorsLast24h]
 */

/**
 * @typedef {object} StoredObject
 * @property {string} key
 * @property {number} size
 * @property {string | null} contentType
 * @property {string} etag
 * @property {string} publicUrl
 * @property {Record<string, string>} metadata
 * @property {string} [lastModified]
 * @property {string} [createdAt]
 * @property {string} [updatedAt]
 * @property {boolean} [keep]
 * @property {{ rule: string, days: number, expiresAt?: string }} [lifecycle]
 */

/**
 * @typedef {object} LifecycleRule
 * @property {string} path
 * @property {number} days
 * @property {string} createdAt
 * @property {string} updatedAt
 */

/**
 * @typedef {object} FolderUsage
 * @property {string} folder
 * @property {number} objects
 * @property {number} bytes
 * @property {number} [lifecycleDays]
 */

/**
 * @typedef {object} ObjectPage
 * @property {StoredObject[]} objects
 * @property {{ path: string, name: string }[]} [folders]
 * @property {string | null} continuationToken
 */

/**
 * @typedef {object} LogEvent
 * @property {string} eventId
 * @property {string} serverId
 * @property {string} level
 * @property {string} eventType
 * @property {string} occurredAt
 * @property {string} ingestedAt
 * @property {string} message
 * @property {string | null} [playerId]
 * @property {string | null} [targetPlayerId]
 * @property {string | null} [resource]
 * @property {Record<string, unknown> | null} [data]
 */

/**
 * @typedef {object} EventPage
 * @property {LogEvent[]} events
 * @property {{ nextCursor: string | null, hasMore: boolean }} pagination
 */

/**
 * @typedef {object} Counts
 * @property {string} interval
 * @property {number} intervalSeconds
 * @property {{ from: string, to: string }} range
 * @property {{ start: string, total: number, levels: Record<string, number> }[]} buckets
 * @property {number} total
 */

/**
 * A page of the console: made anew for every visit.
 * @typedef {object} View
 * @property {(root: HTMLElement, ctx: ViewContext) => Promise<void>} render
 * @property {() => void} leave
 */

/**
 * @typedef {object} ViewContext
 * @property {Whoami} me
 * @property {URLSearchParams} params
 * @property {(url: string, opts?: { replace?: boolean }) => void} navigate
 */

export {};

/**
 * @typedef {object} SavedSearch
 * @property {string} id
 * @property {string} name
 * @property {string[]} serverIds join codes, or ["*"]
 * @property {Record<string, any>} search the query's filter fields
 * @property {string} createdBy
 * @property {string} createdAt
 * @property {string} updatedAt
 */

/**
 * @typedef {object} AlertRule
 * @property {string} id
 * @property {string} name
 * @property {string} savedSearchId
 * @property {'every' | 'threshold'} kind
 * @property {number} [threshold]
 * @property {number} [windowMinutes]
 * @property {number} [cooldownMinutes]
 * @property {string | null} groupBy
 * @property {string[]} destinationIds
 * @property {string | null} mutedUntil
 * @property {string | null} lastFiredAt
 */

/**
 * @typedef {object} Destination
 * @property {string} id
 * @property {string} name
 * @property {'discord' | 'webhook'} kind
 * @property {string} url the address's hint (origin, Discord webhook id)
 */

/**
 * @typedef {object} Delivery
 * @property {string} id
 * @property {string} destinationId
 * @property {string | null} ruleId
 * @property {'pending' | 'delivered' | 'failed'} status
 * @property {number} attempts
 * @property {string | null} nextAttemptAt
 * @property {number | null} lastCode
 * @property {string | null} lastError
 * @property {string} createdAt
 * @property {string | null} deliveredAt
 */
