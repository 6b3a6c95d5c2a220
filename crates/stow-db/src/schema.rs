//! Diesel table definitions, written to match `migrations/`.

diesel::table! {
    plans (name) {
        name -> Text,
        logs_enabled -> Bool,
        retention_days -> Int4,
        max_file_size -> Int8,
        max_url_lifetime_secs -> Int4,
        concurrent_searches -> Int4,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    organizations (id) {
        id -> Text,
        name -> Text,
        slug -> Text,
        plan -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    servers (id) {
        id -> Text,
        org_id -> Text,
        cfx_id -> Text,
        name -> Nullable<Text>,
        logs_active -> Bool,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Text,
        org_id -> Text,
        server_id -> Nullable<Text>,
        credential_type -> Text,
        name -> Nullable<Text>,
        secret_hash -> Bytea,
        secret_hint -> Text,
        permissions -> Array<Text>,
        allowed_prefixes -> Array<Text>,
        denied_prefixes -> Array<Text>,
        allowed_mime -> Nullable<Array<Text>>,
        created_at -> Timestamptz,
        expires_at -> Nullable<Timestamptz>,
        disabled_at -> Nullable<Timestamptz>,
        last_used_at -> Nullable<Timestamptz>,
        servers -> Nullable<Array<Text>>,
    }
}

diesel::table! {
    objects (org_id, key) {
        org_id -> Text,
        key -> Text,
        size -> Int8,
        content_type -> Nullable<Text>,
        etag -> Text,
        metadata -> Jsonb,
        storage_path -> Text,
        updated_at -> Timestamptz,
        created_at -> Nullable<Timestamptz>,
        keep -> Bool,
    }
}

diesel::table! {
    lifecycle_rules (org_id, folder) {
        org_id -> Text,
        folder -> Text,
        days -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    idempotency_records (scope, method, route, idem_key) {
        scope -> Text,
        method -> Text,
        route -> Text,
        idem_key -> Text,
        fingerprint -> Nullable<Bytea>,
        state -> Text,
        status -> Nullable<Int4>,
        response -> Nullable<Jsonb>,
        created_at -> Timestamptz,
        response_body -> Nullable<Bytea>,
        owner -> Nullable<Text>,
        lease_expires_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    upload_urls (token_hash) {
        token_hash -> Bytea,
        org_id -> Text,
        key_id -> Text,
        path -> Text,
        max_files -> Int4,
        files_used -> Int4,
        max_file_size -> Int8,
        allowed_mime -> Nullable<Array<Text>>,
        allow_custom_metadata -> Bool,
        randomize_name -> Bool,
        expires_at -> Timestamptz,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    log_batches (server_id, batch_id) {
        server_id -> Text,
        batch_id -> Text,
        org_id -> Text,
        digest -> Bytea,
        accepted_events -> Int4,
        ingested_at -> Timestamptz,
        commit_xid -> Int8,
        occurred_from -> Nullable<Timestamptz>,
        occurred_to -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    log_counts_hourly (server_id, hour, level, event_type, resource) {
        server_id -> Text,
        hour -> Timestamptz,
        level -> Text,
        event_type -> Text,
        resource -> Text,
        n -> Int8,
    }
}

diesel::table! {
    log_level_counts_15m (server_id, slot, level) {
        server_id -> Text,
        slot -> Timestamptz,
        level -> Text,
        n -> Int8,
    }
}

diesel::table! {
    log_tails (id) {
        id -> Text,
        org_id -> Text,
        expires_at -> Timestamptz,
    }
}

diesel::table! {
    log_events (id) {
        id -> Int8,
        org_id -> Text,
        server_id -> Text,
        cfx_id -> Text,
        batch_id -> Text,
        event_id -> Text,
        level -> Text,
        event_type -> Text,
        occurred_at -> Timestamptz,
        ingested_at -> Timestamptz,
        player_id -> Nullable<Text>,
        target_player_id -> Nullable<Text>,
        player_identifiers -> Nullable<Jsonb>,
        target_player_identifiers -> Nullable<Jsonb>,
        resource -> Nullable<Text>,
        trace_id -> Nullable<Text>,
        environment -> Nullable<Text>,
        message -> Text,
        data -> Nullable<Jsonb>,
    }
}

diesel::table! {
    placeholders (org_id, pattern) {
        org_id -> Text,
        pattern -> Text,
        fallback_key -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    signing_secrets (id) {
        id -> Int8,
        secret -> Bytea,
        created_at -> Timestamptz,
        accepted_until -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    usage_counters (org_id, month) {
        org_id -> Text,
        month -> Date,
        log_events -> Int8,
    }
}

diesel::joinable!(servers -> organizations (org_id));
diesel::table! {
    members (id) {
        id -> Text,
        login -> Text,
        display_name -> Nullable<Text>,
        password_hash -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    memberships (org_id, member_id) {
        org_id -> Text,
        member_id -> Text,
        role -> Text,
        servers -> Nullable<Array<Text>>,
        allowed_prefixes -> Array<Text>,
        denied_prefixes -> Array<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    invitations (id) {
        id -> Text,
        org_id -> Text,
        role -> Text,
        servers -> Nullable<Array<Text>>,
        allowed_prefixes -> Array<Text>,
        denied_prefixes -> Array<Text>,
        invited_by -> Nullable<Text>,
        token_hash -> Bytea,
        note -> Nullable<Text>,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        accepted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    password_resets (token_hash) {
        token_hash -> Bytea,
        member_id -> Text,
        made_by -> Nullable<Text>,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        used_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    sign_in_failures (subject) {
        subject -> Text,
        count -> Integer,
        last_at -> Timestamptz,
        blocked_until -> Timestamptz,
    }
}

diesel::table! {
    audit_events (id) {
        id -> BigInt,
        org_id -> Text,
        at -> Timestamptz,
        actor_kind -> Text,
        actor_id -> Text,
        actor_label -> Text,
        via -> Text,
        address -> Nullable<Text>,
        request_id -> Nullable<Text>,
        action -> Text,
        target -> Text,
        details -> Jsonb,
        refused -> Nullable<Text>,
    }
}

diesel::table! {
    member_second_factors (member_id) {
        member_id -> Text,
        sealed_secret -> Bytea,
        confirmed_at -> Nullable<Timestamptz>,
        last_step -> Nullable<BigInt>,
    }
}

diesel::table! {
    recovery_codes (member_id, code_hash) {
        member_id -> Text,
        code_hash -> Bytea,
        used_at -> Nullable<Timestamptz>,
    }
}

diesel::joinable!(api_keys -> organizations (org_id));
diesel::joinable!(memberships -> members (member_id));
diesel::joinable!(memberships -> organizations (org_id));
diesel::table! {
    saved_searches (id) {
        id -> Text,
        org_id -> Text,
        name -> Text,
        server_ids -> Nullable<Array<Text>>,
        search -> Jsonb,
        created_by -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    plans,
    lifecycle_rules,
    organizations,
    servers,
    api_keys,
    members,
    memberships,
    invitations,
    password_resets
);
