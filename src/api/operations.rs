//! The route table of `/v1`: each operation's method and path template, what `openapi.json`
//! says of it, the body it reads, and its handler, which reads the request into the
//! operation's typed input (path parameters decoded once, the body by `wire` with unknown
//! members refused), calls the operation of `ops` and encodes its answer. `404`, `405`, the
//! paths of `openapi.json` (`super::openapi`) and the fuzz target `json_body`'s readers all
//! come from this table.
//!
//! The contract's order: the table's body reader runs before the handler (`super::process`),
//! so the body is refused (`400`, `422`) before the path is read; the handler reads the same
//! body into its input, then the path: a `{ref}` that is no reference is `422` on `ref`, a
//! `{domain}` or `{id}` that names nothing is `404`, like one of another organisation.

use super::{OperationContext, Reply};
use crate::error::ApiError;
use crate::ids::{CardId, KeyId, RouteId};
use crate::ops;
use crate::wire;
use serde_json::Value;

/// One operation of `/v1` as the router finds it: its method, path and handler, and what the
/// description says of it.
pub struct Endpoint {
    pub method: &'static str,
    /// The path, parameters in braces (`/v1/sites/{domain}`), as `openapi.json` writes it.
    pub path: &'static str,
    pub doc: Doc,
    /// The JSON body it reads: every write's (`PUT`, `POST`, `DELETE`), no read's.
    pub body: Option<Body>,
    pub handle: fn(&mut OperationContext) -> Result<Reply, ApiError>,
}

/// What `openapi.json` says of an operation beyond what its path and body tell: the
/// description writes its parameters, its headers and the refusals every operation shares
/// (`401`, `429`, `500`; `400` and `422` with a body; `404` with an object in the path).
pub struct Doc {
    /// Its `operationId`.
    pub id: &'static str,
    /// Its one tag, one of those `openapi_frame.json` describes.
    pub tag: &'static str,
    pub summary: &'static str,
    pub text: &'static str,
    pub answers: &'static [Answer],
    /// Its other refusals, by status: `403` (a platform card), `409` (a write that collided).
    pub refusals: &'static [u16],
}

/// A success the operation answers.
pub struct Answer {
    pub status: u16,
    /// The name of its schema among `wire::SCHEMAS`.
    pub schema: &'static str,
    pub text: &'static str,
    /// Its examples by name, a JSON object (`{}`: none).
    pub examples: &'static str,
}

/// The JSON body of an operation.
pub struct Body {
    /// Its shape's check, run before the handler (`super::process`); the fuzz target
    /// `json_body` runs every one.
    pub read: fn(&Value) -> Result<(), ApiError>,
    /// The name of its schema among `wire::SCHEMAS`.
    pub schema: &'static str,
    pub text: &'static str,
    /// Its examples by name, a JSON object.
    pub examples: &'static str,
}

/// The `{}` body of a `DELETE`.
const EMPTY: Body = Body {
    read: wire::empty_write,
    schema: "EmptyObject",
    text: "The empty JSON object `{}` (a `DELETE` still sends `Content-Type: application/json` \
           and a JSON object body). Any member is refused with `400 unknown_field`; a JSON value \
           that is not an object is `422 validation` with field `body`.",
    examples: r#"{"empty": {}}"#,
};

/// Every operation of the management API.
pub const OPERATIONS: &[Endpoint] = &[
    Endpoint {
        method: "GET",
        path: "/v1/me",
        doc: Doc {
            id: "get_me",
            tag: "me",
            summary: "Who am I",
            text: "The organisation and the management token of the call. Call it first to check \
                   `account.id` (also the `partner_id` of the fragment endpoint).",
            answers: &[Answer {
                status: 200,
                schema: "Me",
                text: "The organisation and the token.",
                examples: r#"{
                        "me": {
                            "account": {
                                "id": "acc_0a1b2c3d4e5f6g7h8i9j",
                                "name": "Example News"
                            },
                            "token": {
                                "id": "mgt_1c3e5g7i9k1m3o5q7s9u",
                                "prefix": "svc_mgmt_3f2"
                            }
                        }
                    }"#,
            }],
            refusals: &[],
        },
        body: None,
        handle: |ctx| Ok(Reply::ok(wire::me_json(&ops::orgs::get_me(&ctx.caller)?))),
    },
    Endpoint {
        method: "GET",
        path: "/v1/sites",
        doc: Doc {
            id: "list_sites",
            tag: "sites",
            summary: "List sites",
            text: "All sites of the caller's organisation, sorted by domain (byte order).",
            answers: &[Answer {
                status: 200,
                schema: "SiteList",
                text: "The sites.",
                examples: r#"{
                        "sites": {
                            "items": [
                                {
                                    "domain": "example.com",
                                    "name": "Example News",
                                    "default_fragment_ref": "/home",
                                    "default_fragment_id": "frg_8k2m4n6p8q0r2s4t6v8w",
                                    "icon": null,
                                    "created_at": "2025-01-15T09:30:00Z",
                                    "updated_at": "2025-01-16T10:00:00Z"
                                }
                            ]
                        }
                    }"#,
            }],
            refusals: &[],
        },
        body: None,
        handle: |ctx| {
            let sites = ops::sites::list_sites(&mut *ctx.db, &ctx.caller)?;
            Ok(Reply::ok(wire::site_list_json(&sites)))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/sites/{domain}",
        doc: Doc {
            id: "put_site",
            tag: "sites",
            summary: "Create or update a site",
            text: "Creates the site in the caller's organisation (`201`) or updates it (`200`); \
                   both answer with the site. `name` absent keeps the current name, `\"\"` clears \
                   it. `default_fragment_ref` absent keeps the default; present, it must be an \
                   active fragment of this site, otherwise `422` (so it cannot be combined with \
                   creating the site). A `domain` member is `400 unknown_field`. Repeating the \
                   same body leaves the same state (the second call answers `200`). Deleting a \
                   site is a console action.",
            answers: &[
                Answer {
                    status: 200,
                    schema: "Site",
                    text: "Updated; the site.",
                    examples: r#"{
                        "site": {
                            "domain": "example.com",
                            "name": "Example News",
                            "default_fragment_ref": "/home",
                            "default_fragment_id": "frg_8k2m4n6p8q0r2s4t6v8w",
                            "icon": null,
                            "created_at": "2025-01-15T09:30:00Z",
                            "updated_at": "2025-01-16T10:00:00Z"
                        }
                    }"#,
                },
                Answer {
                    status: 201,
                    schema: "Site",
                    text: "Created; the site.",
                    examples: "{}",
                },
            ],
            refusals: &[409],
        },
        body: Some(Body {
            read: |body| wire::site_write(body).map(drop),
            schema: "SiteWrite",
            text: "Site attributes to set.",
            examples: r#"{
                "name": {
                    "name": "Example News"
                },
                "default": {
                    "default_fragment_ref": "/home"
                }
            }"#,
        }),
        handle: |ctx| {
            let write = wire::site_write(ctx.body())?;
            let domain = ctx.new_site()?;
            let saved = ops::sites::put_site(&mut *ctx.db, &ctx.caller, &domain, write)?;
            let body = wire::site_json(&saved.record);
            Ok(Reply::created_or_updated(saved.created, body))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/sites/{domain}/fragments",
        doc: Doc {
            id: "list_fragments",
            tag: "fragments",
            summary: "List a site's fragments",
            text: "All fragments of the site, active and paused, sorted by reference (byte \
                   order), those without a reference last.",
            answers: &[Answer {
                status: 200,
                schema: "FragmentList",
                text: "The fragments.",
                examples: r#"{
                        "fragments": {
                            "items": [
                                {
                                    "id": "frg_8k2m4n6p8q0r2s4t6v8w",
                                    "ref": "/politics",
                                    "name": "Politics",
                                    "lang": "fr",
                                    "description": null,
                                    "key_values": {
                                        "section": [
                                            "politics"
                                        ]
                                    },
                                    "status": "active",
                                    "created_at": "2025-01-15T09:31:00Z",
                                    "updated_at": "2025-01-15T09:31:00Z"
                                }
                            ]
                        }
                    }"#,
            }],
            refusals: &[],
        },
        body: None,
        handle: |ctx| {
            let domain = ctx.site()?;
            let fragments = ops::fragments::list_fragments(&mut *ctx.db, &ctx.caller, &domain)?;
            Ok(Reply::ok(wire::fragment_list_json(&fragments)))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/sites/{domain}/fragments/{ref}",
        doc: Doc {
            id: "put_fragment",
            tag: "fragments",
            summary: "Create or replace a fragment",
            text: "Creates the fragment with this reference (`201`) or replaces it (`200`); the \
                   body describes the whole fragment. On update a member left out is reset \
                   (`lang` → `fr`, description removed, `key_values` → `{}`); only `status` is \
                   kept when absent (`active` on creation). A write that leaves the fragment \
                   `paused` while it is the site default and/or the target of rules keeps both \
                   and lists them in `warnings`; otherwise `warnings` is `[]`. A fragment cannot \
                   be deleted through the API (pause it instead). The reference cannot be \
                   changed. A body error gives `422` even for an unknown site.",
            answers: &[
                Answer {
                    status: 200,
                    schema: "FragmentWriteResult",
                    text: "Updated; the fragment with `warnings`.",
                    examples: r#"{
                        "paused_default": {
                            "id": "frg_8k2m4n6p8q0r2s4t6v8w",
                            "ref": "/politics",
                            "name": "Politics",
                            "lang": "fr",
                            "description": null,
                            "key_values": {
                                "section": [
                                    "politics"
                                ]
                            },
                            "status": "paused",
                            "created_at": "2025-01-15T09:31:00Z",
                            "updated_at": "2025-01-15T09:31:00Z",
                            "warnings": [
                                "site default",
                                "target of 2 rules"
                            ]
                        }
                    }"#,
                },
                Answer {
                    status: 201,
                    schema: "FragmentWriteResult",
                    text: "Created; the fragment with `warnings` (`[]`).",
                    examples: r#"{
                        "created": {
                            "id": "frg_8k2m4n6p8q0r2s4t6v8w",
                            "ref": "/politics",
                            "name": "Politics",
                            "lang": "fr",
                            "description": null,
                            "key_values": {
                                "section": [
                                    "politics"
                                ]
                            },
                            "status": "active",
                            "created_at": "2025-01-15T09:31:00Z",
                            "updated_at": "2025-01-15T09:31:00Z",
                            "warnings": []
                        }
                    }"#,
                },
            ],
            refusals: &[409],
        },
        body: Some(Body {
            read: |body| wire::fragment_write(body).map(drop),
            schema: "FragmentWrite",
            text: "The whole fragment.",
            examples: r#"{
                "fragment": {
                    "name": "Politics",
                    "lang": "fr",
                    "key_values": {
                        "section": [
                            "politics"
                        ]
                    }
                },
                "pause": {
                    "name": "Politics",
                    "status": "paused"
                }
            }"#,
        }),
        handle: |ctx| {
            let write = wire::fragment_write(ctx.body())?;
            let fragment_ref = ctx.fragment_ref()?;
            let domain = ctx.site()?;
            let put = ops::fragments::put_fragment(
                &mut *ctx.db,
                &ctx.caller,
                &domain,
                &fragment_ref,
                write,
            )?;
            let body = wire::fragment_write_json(&put.fragment.record, &put.warnings);
            Ok(Reply::created_or_updated(put.fragment.created, body))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/sites/{domain}/default-fragment",
        doc: Doc {
            id: "put_default_fragment",
            tag: "sites",
            summary: "Set the site default fragment",
            text: "Sets the site default fragment, the fragment a page resolves to when no \
                   routing rule matches. `ref` must name an **active** fragment of this site (a \
                   paused fragment cannot be newly set as default), otherwise `422` with field \
                   `ref`. Answers `200` with the site.",
            answers: &[Answer {
                status: 200,
                schema: "Site",
                text: "The site, with its new default.",
                examples: r#"{
                        "site": {
                            "domain": "example.com",
                            "name": "Example News",
                            "default_fragment_ref": "/home",
                            "default_fragment_id": "frg_8k2m4n6p8q0r2s4t6v8w",
                            "icon": null,
                            "created_at": "2025-01-15T09:30:00Z",
                            "updated_at": "2025-01-16T10:00:00Z"
                        }
                    }"#,
            }],
            refusals: &[409],
        },
        body: Some(Body {
            read: |body| wire::default_fragment_write(body).map(drop),
            schema: "DefaultFragmentWrite",
            text: "The reference of the new default fragment.",
            examples: r#"{"ref": {"ref": "/home"}}"#,
        }),
        handle: |ctx| {
            let fragment_ref = wire::default_fragment_write(ctx.body())?;
            let domain = ctx.site()?;
            let site = ops::sites::put_default_fragment(
                &mut *ctx.db,
                &ctx.caller,
                &domain,
                &fragment_ref,
            )?;
            Ok(Reply::ok(wire::site_json(&site)))
        },
    },
    Endpoint {
        method: "DELETE",
        path: "/v1/sites/{domain}/default-fragment",
        doc: Doc {
            id: "delete_default_fragment",
            tag: "sites",
            summary: "Clear the site default fragment",
            text: "Removes the site default; the fragment itself is kept. Repeatable: a second \
                   call answers `200` with the same state. Answers `200` with the site \
                   (`default_fragment_ref` and `default_fragment_id` null).",
            answers: &[Answer {
                status: 200,
                schema: "Site",
                text: "The site, without a default.",
                examples: r#"{
                        "site": {
                            "domain": "example.com",
                            "name": "Example News",
                            "default_fragment_ref": null,
                            "default_fragment_id": null,
                            "icon": null,
                            "created_at": "2025-01-15T09:30:00Z",
                            "updated_at": "2025-01-16T10:00:00Z"
                        }
                    }"#,
            }],
            refusals: &[409],
        },
        body: Some(EMPTY),
        handle: |ctx| {
            let domain = ctx.site()?;
            let site = ops::sites::delete_default_fragment(&mut *ctx.db, &ctx.caller, &domain)?;
            Ok(Reply::ok(wire::site_json(&site)))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/sites/{domain}/routes",
        doc: Doc {
            id: "list_routes",
            tag: "routes",
            summary: "List a site's routing rules",
            text: "All rules of the site (at most 200), sorted by canonical path (byte order), \
                   then match mode (`exact` before `prefix`).",
            answers: &[Answer {
                status: 200,
                schema: "RouteList",
                text: "The rules.",
                examples: r#"{
                        "routes": {
                            "items": [
                                {
                                    "id": "rte_3h5j7k9m1n3p5q7r9s1t",
                                    "path_prefix": "/actualite/",
                                    "match": "prefix",
                                    "fragment_ref": "/politics",
                                    "fragment_id": "frg_8k2m4n6p8q0r2s4t6v8w"
                                }
                            ]
                        }
                    }"#,
            }],
            refusals: &[],
        },
        body: None,
        handle: |ctx| {
            let domain = ctx.site()?;
            let routes = ops::routes::list_routes(&mut *ctx.db, &ctx.caller, &domain)?;
            Ok(Reply::ok(wire::route_list_json(&routes)))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/sites/{domain}/routes",
        doc: Doc {
            id: "replace_routes",
            tag: "routes",
            summary: "Replace all routing rules",
            text: "Replaces every rule of the site with the given list. The whole list is checked \
                   first (ceiling of 200, paths, references, duplicates after canonicalization) \
                   and applied at once; on any error nothing changes. Every rule gets a new id; \
                   rules missing from the list are deleted; `{\"routes\": []}` deletes every \
                   rule. Paused target fragments are accepted. Concurrent replacements: the last \
                   write wins. Answers `200` with the new list.",
            answers: &[Answer {
                status: 200,
                schema: "RouteList",
                text: "The new list of rules.",
                examples: r#"{
                        "routes": {
                            "items": [
                                {
                                    "id": "rte_3h5j7k9m1n3p5q7r9s1t",
                                    "path_prefix": "/actualite/",
                                    "match": "prefix",
                                    "fragment_ref": "/politics",
                                    "fragment_id": "frg_8k2m4n6p8q0r2s4t6v8w"
                                }
                            ]
                        }
                    }"#,
            }],
            refusals: &[409],
        },
        body: Some(Body {
            read: |body| wire::route_list(body).map(drop),
            schema: "RoutesReplace",
            text: "The complete new list of rules.",
            examples: r#"{
                "routes": {
                    "routes": [
                        {
                            "path_prefix": "Actualite/",
                            "match": "prefix",
                            "ref": "/politics"
                        },
                        {
                            "path_prefix": "/",
                            "match": "exact",
                            "ref": "/home"
                        }
                    ]
                },
                "clear": {
                    "routes": []
                }
            }"#,
        }),
        handle: |ctx| {
            let routes = wire::route_list(ctx.body())?;
            let domain = ctx.site()?;
            let stored = ops::routes::replace_routes(&mut *ctx.db, &ctx.caller, &domain, &routes)?;
            Ok(Reply::ok(wire::route_list_json(&stored)))
        },
    },
    Endpoint {
        method: "POST",
        path: "/v1/sites/{domain}/routes",
        doc: Doc {
            id: "create_route",
            tag: "routes",
            summary: "Add one routing rule",
            text: "Adds one rule. `409 conflict` (field `path_prefix`) if a rule with the same \
                   canonical path and match mode exists; `422` with field `routes` once the site \
                   already has 200 rules; `422` with field `ref` if `ref` is missing, not a \
                   string, invalid or not a fragment of this site (a paused target is accepted); \
                   `422` with field `path_prefix` or `match` for invalid values; `422` with field \
                   `body` for a body that is not an object. Unknown site: `404`. Answers `201` \
                   with the new rule.",
            answers: &[Answer {
                status: 201,
                schema: "Route",
                text: "The created rule.",
                examples: r#"{
                        "route": {
                            "id": "rte_3h5j7k9m1n3p5q7r9s1t",
                            "path_prefix": "/actualite/",
                            "match": "prefix",
                            "fragment_ref": "/politics",
                            "fragment_id": "frg_8k2m4n6p8q0r2s4t6v8w"
                        }
                    }"#,
            }],
            refusals: &[409],
        },
        body: Some(Body {
            read: |body| wire::route_write(body).map(drop),
            schema: "RouteWrite",
            text: "The rule.",
            examples: r#"{
                "route": {
                    "path_prefix": "Actualite/",
                    "match": "prefix",
                    "ref": "/politics"
                }
            }"#,
        }),
        handle: |ctx| {
            let route = wire::route_write(ctx.body())?;
            let domain = ctx.site()?;
            let created = ops::routes::create_route(&mut *ctx.db, &ctx.caller, &domain, &route)?;
            Ok(Reply::created(wire::route_json(&created)))
        },
    },
    Endpoint {
        method: "DELETE",
        path: "/v1/sites/{domain}/routes/{id}",
        doc: Doc {
            id: "delete_route",
            tag: "routes",
            summary: "Delete one routing rule",
            text: "Removes one rule of the site and answers `200` with the removed rule. A second \
                   delete of the same id gives `404`.",
            answers: &[Answer {
                status: 200,
                schema: "Route",
                text: "The removed rule.",
                examples: r#"{
                        "route": {
                            "id": "rte_3h5j7k9m1n3p5q7r9s1t",
                            "path_prefix": "/actualite/",
                            "match": "prefix",
                            "fragment_ref": "/politics",
                            "fragment_id": "frg_8k2m4n6p8q0r2s4t6v8w"
                        }
                    }"#,
            }],
            refusals: &[409],
        },
        body: Some(EMPTY),
        handle: |ctx| {
            let domain = ctx.site()?;
            let id = ctx.id(RouteId::parse)?;
            let removed = ops::routes::delete_route(&mut *ctx.db, &ctx.caller, &domain, &id)?;
            Ok(Reply::ok(wire::route_json(&removed)))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/cards",
        doc: Doc {
            id: "list_cards",
            tag: "cards",
            summary: "List cards",
            text: "The organisation's cards and the platform cards (`account_id` null), all \
                   statuses, ordered by id. Cards are read-only through the API.",
            answers: &[Answer {
                status: 200,
                schema: "CardList",
                text: "The cards.",
                examples: r#"{
                        "cards": {
                            "items": [
                                {
                                    "id": "crd_2f4h6j8l0n2p4r6t8v0x",
                                    "account_id": "acc_0a1b2c3d4e5f6g7h8i9j",
                                    "status": "active",
                                    "name": "Subscription offer",
                                    "lang": "fr",
                                    "brand": "Example News",
                                    "brand_domain": "example.com",
                                    "title": "Read Example News",
                                    "body": "Independent reporting since 1950.",
                                    "link_url": "https://example.com/subscribe",
                                    "link_label": "Subscribe",
                                    "key_values": {},
                                    "created_at": "2025-01-15T09:35:00Z",
                                    "updated_at": "2025-01-15T09:35:00Z"
                                }
                            ]
                        }
                    }"#,
            }],
            refusals: &[],
        },
        body: None,
        handle: |ctx| {
            let cards = ops::cards::list_cards(&mut *ctx.db, &ctx.caller)?;
            Ok(Reply::ok(wire::card_list_json(&cards)))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/cards/{id}/eligibility",
        doc: Doc {
            id: "get_eligibility",
            tag: "eligibility",
            summary: "Get a card's eligibility",
            text: "The fragments of the caller's organisation the card is eligible on, sorted by \
                   domain then ref. For one of the organisation's cards an empty list means \
                   eligible everywhere in the organisation (when the card is active). For a \
                   platform card an empty list is not conclusive: the eligibility set by other \
                   organisations is hidden.",
            answers: &[Answer {
                status: 200,
                schema: "EligibilityList",
                text: "The eligibility list.",
                examples: r#"{
                        "eligibility": {
                            "items": [
                                {
                                    "domain": "example.com",
                                    "ref": "/politics",
                                    "fragment_id": "frg_8k2m4n6p8q0r2s4t6v8w"
                                }
                            ]
                        }
                    }"#,
            }],
            refusals: &[],
        },
        body: None,
        handle: |ctx| {
            let id = ctx.id(CardId::parse)?;
            let items = ops::cards::get_eligibility(&mut *ctx.db, &ctx.caller, &id)?;
            Ok(Reply::ok(wire::eligibility_json(&items)))
        },
    },
    Endpoint {
        method: "PUT",
        path: "/v1/cards/{id}/eligibility",
        doc: Doc {
            id: "replace_eligibility",
            tag: "eligibility",
            summary: "Replace a card's eligibility",
            text: "Replaces the card's eligibility list. Checked entirely and applied at once; on \
                   any error nothing changes. Only fragments of the caller's organisation are \
                   accepted (paused ones too); a card in any status can be made eligible; the \
                   same fragment named twice counts once; fragments missing from the list lose \
                   the card. `{\"fragments\": []}` makes the card, when active, eligible \
                   everywhere in the organisation. A platform card gives `403 platform_card` \
                   (after the `404` check of the card). Concurrent replacements: the last write \
                   wins. Answers `200` with the new list.",
            answers: &[Answer {
                status: 200,
                schema: "EligibilityList",
                text: "The new eligibility list.",
                examples: "{}",
            }],
            refusals: &[403, 409],
        },
        body: Some(Body {
            read: |body| wire::eligibility_write(body).map(drop),
            schema: "EligibilityReplace",
            text: "The complete new list of fragments.",
            examples: r#"{
                "fragments": {
                    "fragments": [
                        {
                            "domain": "example.com",
                            "ref": "/politics"
                        }
                    ]
                },
                "everywhere": {
                    "fragments": []
                }
            }"#,
        }),
        handle: |ctx| {
            let wanted = wire::eligibility_write(ctx.body())?;
            let id = ctx.id(CardId::parse)?;
            let items = ops::cards::replace_eligibility(&mut *ctx.db, &ctx.caller, &id, &wanted)?;
            Ok(Reply::ok(wire::eligibility_json(&items)))
        },
    },
    Endpoint {
        method: "GET",
        path: "/v1/keys",
        doc: Doc {
            id: "list_keys",
            tag: "keys",
            summary: "List delivery API keys",
            text: "All delivery keys of the organisation, revoked ones included, newest first. \
                   Never the full key, only its 12-character prefix.",
            answers: &[Answer {
                status: 200,
                schema: "KeyList",
                text: "The keys.",
                examples: r#"{
                        "keys": {
                            "items": [
                                {
                                    "id": "key_4b6d8f0h2j4k6m8n0p2q",
                                    "prefix": "svc_live_9a1",
                                    "name": "edge worker",
                                    "created_at": "2025-01-15T09:40:00Z",
                                    "revoked_at": null,
                                    "last_used_at": null
                                }
                            ]
                        }
                    }"#,
            }],
            refusals: &[],
        },
        body: None,
        handle: |ctx| {
            let keys = ops::keys::list_keys(&mut *ctx.db, &ctx.caller)?;
            Ok(Reply::ok(wire::key_list_json(&keys)))
        },
    },
    Endpoint {
        method: "POST",
        path: "/v1/keys",
        doc: Doc {
            id: "create_key",
            tag: "keys",
            summary: "Create a delivery API key",
            text: "Creates a live delivery key for the fragment endpoint and answers `201` with \
                   the full key in `key`, shown only in this response. Not repeatable: each call \
                   creates a new key.",
            answers: &[Answer {
                status: 201,
                schema: "KeyCreated",
                text: "The created key, with the full key.",
                examples: r#"{
                        "key": {
                            "id": "key_4b6d8f0h2j4k6m8n0p2q",
                            "prefix": "svc_live_9a1",
                            "name": "edge worker",
                            "created_at": "2025-01-15T09:40:00Z",
                            "revoked_at": null,
                            "last_used_at": null,
                            "key": "svc_live_9a1c3e5a7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a"
                        }
                    }"#,
            }],
            refusals: &[],
        },
        body: Some(Body {
            read: |body| wire::key_write(body).map(drop),
            schema: "KeyCreate",
            text: "Optional name.",
            examples: r#"{"named": {"name": "edge worker"}, "unnamed": {}}"#,
        }),
        handle: |ctx| {
            let name = wire::key_write(ctx.body())?;
            let prefix = &ctx.app.config.prefix;
            let created = ops::keys::create_key(&mut *ctx.db, &ctx.caller, name.as_ref(), prefix)?;
            let body = wire::created_key_json(&created.key, &created.secret);
            Ok(Reply::created(body))
        },
    },
    Endpoint {
        method: "DELETE",
        path: "/v1/keys/{id}",
        doc: Doc {
            id: "revoke_key",
            tag: "keys",
            summary: "Revoke a delivery API key",
            text: "Revokes the key; the fragment endpoint refuses it from the next call. \
                   Repeatable: revoking a revoked key answers `200` with the first revocation \
                   date. Answers `200` with the key record. Deleting a revoked key is a console \
                   action.",
            answers: &[Answer {
                status: 200,
                schema: "Key",
                text: "The revoked key.",
                examples: r#"{
                        "key": {
                            "id": "key_4b6d8f0h2j4k6m8n0p2q",
                            "prefix": "svc_live_9a1",
                            "name": "edge worker",
                            "created_at": "2025-01-15T09:40:00Z",
                            "revoked_at": "2025-02-01T12:00:00Z",
                            "last_used_at": null
                        }
                    }"#,
            }],
            refusals: &[409],
        },
        body: Some(EMPTY),
        handle: |ctx| {
            let id = ctx.id(KeyId::parse)?;
            let key = ops::keys::revoke_key(&mut *ctx.db, &ctx.caller, &id)?;
            Ok(Reply::ok(wire::key_json(&key)))
        },
    },
];

/// A matched operation and its path parameters by name, still percent-encoded.
#[derive(Debug)]
pub struct Matched<'a> {
    pub endpoint: &'static Endpoint,
    pub params: Params<'a>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// The path parameters of a matched operation: template name (`domain`, `ref`, `id`) and
/// segment as sent.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Params<'a>(Vec<(&'static str, &'a str)>);

impl<'a> Params<'a> {
    /// The segment of parameter `name`; the table guarantees its presence for its handlers.
    pub fn get(&self, name: &str) -> &'a str {
        self.0
            .iter()
            .find(|(param, _)| *param == name)
            .map_or("", |(_, segment)| segment)
    }
}

/// `(method, path)` → operation; `404 not_found` for an unknown path, `405` with the allowed
/// methods for a known path and another method.
pub fn route<'a>(method: &str, path: &'a str) -> Result<Matched<'a>, ApiError> {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut allowed: Vec<&str> = Vec::new();
    for operation in OPERATIONS {
        let Some(params) = match_template(operation.path, &segments) else {
            continue;
        };
        if operation.method == method {
            return Ok(Matched {
                endpoint: operation,
                params,
            });
        }
        allowed.push(operation.method);
    }
    if allowed.is_empty() {
        Err(ApiError::NotFound)
    } else {
        Err(ApiError::MethodNotAllowed {
            allow: allowed.join(", "),
        })
    }
}

fn match_template<'a>(template: &'static str, segments: &[&'a str]) -> Option<Params<'a>> {
    let parts: Vec<&'static str> = template.split('/').skip(1).collect();
    if parts.len() != segments.len() {
        return None;
    }
    let mut params = Vec::new();
    for (part, segment) in parts.iter().zip(segments) {
        if let Some(name) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            if segment.is_empty() {
                return None;
            }
            params.push((name, *segment));
        } else if part != segment {
            return None;
        }
    }
    Some(Params(params))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Expected = Result<(&'static str, Vec<(&'static str, &'static str)>), u16>;

    #[test]
    fn paths_route_to_operations_or_404_405() {
        let cases: Vec<(&str, &str, Expected)> = vec![
            ("GET", "/v1/me", Ok(("/v1/me", vec![]))),
            (
                "PUT",
                "/v1/sites/example.com",
                Ok(("/v1/sites/{domain}", vec![("domain", "example.com")])),
            ),
            (
                "PUT",
                "/v1/sites/a.com/fragments/%2Fpolitics",
                Ok((
                    "/v1/sites/{domain}/fragments/{ref}",
                    vec![("domain", "a.com"), ("ref", "%2Fpolitics")],
                )),
            ),
            ("PUT", "/v1/sites/a.com/fragments/a/b", Err(404)),
            (
                "DELETE",
                "/v1/sites/a.com/routes/rte_1",
                Ok((
                    "/v1/sites/{domain}/routes/{id}",
                    vec![("domain", "a.com"), ("id", "rte_1")],
                )),
            ),
            ("GET", "/v1/me/", Err(404)),
            ("GET", "/v1/sites//fragments", Err(404)),
            ("GET", "/v1/nothing", Err(404)),
            ("POST", "/v1/me", Err(405)),
            ("DELETE", "/v1/keys", Err(405)),
        ];
        for (method, path, expected) in cases {
            let got = route(method, path)
                .map(|m| (m.endpoint.path, m.params.0))
                .map_err(|e| e.status());
            assert_eq!(got, expected, "{method} {path}");
        }
    }

    #[test]
    fn every_write_and_no_read_reads_a_body() {
        for operation in OPERATIONS {
            let writes = operation.method != "GET";
            assert_eq!(operation.body.is_some(), writes, "{operation:?}");
        }
    }

    #[test]
    fn method_not_allowed_lists_the_allowed_methods() {
        let error = route("DELETE", "/v1/sites/a.com/routes").unwrap_err();
        assert!(matches!(error, ApiError::MethodNotAllowed { allow } if allow == "GET, PUT, POST"));
    }
}
