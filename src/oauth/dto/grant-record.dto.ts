/** An assistant's access to the MCP endpoint on a person's behalf: a grant of Drey's authorization server. */
export class GrantRecordDto {
  /** The grant's id, used to revoke it. */
  grant_id!: string;
  /** Whose access it is. */
  username!: string;
  /** The client's id: a registered client's, or the URL of its metadata document. */
  client_id!: string;
  /** The name the client gave itself. */
  client_name!: string;
  /** The host that vouches for the client: its metadata document's, or the one it returns the person to. */
  client_origin!: string;
  /** When the person allowed it. */
  created_at!: string;
  /** When one of its tokens was last used (to the minute); null before the first use. */
  last_used_at!: string | null;
}
