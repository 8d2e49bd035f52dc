/**
 * A job's GitHub credentials as the code that uses them sees them: a token and what it was granted,
 * read at the moment of use. `credentials/` mints, renews, seals and scopes them; everything else
 * holds one of these and never knows where the token came from or when it is renewed.
 */
export interface GrantedToken {
  token: string;
  /** What GitHub granted the token (`contents: "write"`, ...): the use cases read it to choose what to push. */
  permissions: Record<string, string>;
}

/** The token to use now (renewed first when it has too little time left). */
export type TokenGetter = () => Promise<GrantedToken>;
