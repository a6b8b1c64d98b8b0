/** Mesh config `extensionProviders` entries that the authorization builder reads (external authorization). */

export interface ExtAuthzRequestBody {
  readonly maxRequestBytes?: number;
  readonly allowPartialMessage?: boolean;
  readonly packAsBytes?: boolean;
}

interface ExtAuthzCommon {
  /** `[<namespace>/]<hostname>` of the authorization service. */
  readonly service: string;
  readonly port: number;
  /** Milliseconds; absent means 600 s, as istiod. */
  readonly timeoutMs?: number;
  readonly failOpen?: boolean;
  readonly statusOnError?: string;
  readonly includeRequestBodyInCheck?: ExtAuthzRequestBody;
}

export interface ExtAuthzHttpProvider extends ExtAuthzCommon {
  readonly pathPrefix?: string;
  readonly includeRequestHeadersInCheck?: readonly string[];
  /** Deprecated; used only when includeRequestHeadersInCheck is empty. */
  readonly includeHeadersInCheck?: readonly string[];
  readonly includeAdditionalHeadersInCheck?: Readonly<Record<string, string>>;
  readonly headersToUpstreamOnAllow?: readonly string[];
  readonly headersToDownstreamOnDeny?: readonly string[];
  readonly headersToDownstreamOnAllow?: readonly string[];
}

export type ExtAuthzGrpcProvider = ExtAuthzCommon;

export interface ExtensionProvider {
  readonly name: string;
  readonly envoyExtAuthzHttp?: ExtAuthzHttpProvider;
  readonly envoyExtAuthzGrpc?: ExtAuthzGrpcProvider;
}
