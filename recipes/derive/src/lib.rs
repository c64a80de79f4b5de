//! `#[derive(RenameSessions)]`: renaming sessions throughout a value, field by field, for the
//! model checker's symmetry reduction (see `zklab_recipes::session_renaming`), and hashing a value as
//! renamed without building it.
//!
//! Every field is renamed by its own `RenameSessions` impl, unless it says otherwise:
//!
//! - `#[rename(session)]`: the field holds session ids (an id, or an `Option`, `Vec` or
//!   `BTreeSet` of them), which are renamed as ids;
//! - `#[rename(client)]`: the field holds client indices (the trace's `ClientId`, or an
//!   `Option`, `Vec` or `BTreeSet` of them), which move with their clients when the checker
//!   reorders them;
//! - `#[rename(guid)]`: the field is a bare session guid;
//! - `#[rename(keep)]`: the field names no session (needed for an `i64` that is not a session
//!   id: a bare `i64` has no impl, so that no session id is kept by mistake).
//!
//! The generated code names `::zklab_recipes`; a crate that reaches it under another path says
//! so on the type: `#[rename(crate = zklab::recipes)]`.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::{
    parse_macro_input, parse_quote, Data, DeriveInput, Error, Field, Fields, GenericParam, Ident,
    Type,
};

/// Derives `zklab_recipes::session_renaming::RenameSessions`.
#[proc_macro_derive(RenameSessions, attributes(rename))]
pub fn derive_rename_sessions(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

fn expand(mut input: DeriveInput) -> syn::Result<Tokens> {
    let krate = crate_path(&input)?;
    let symmetry = quote!(#krate::session_renaming);
    let name = &input.ident;
    let params: Vec<Ident> = input
        .generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(ty) => Some(ty.ident.clone()),
            _ => None,
        })
        .collect();
    let (body, hash_body) = match &input.data {
        Data::Struct(data) => {
            let (pattern, build) = rebuild(&symmetry, quote!(#name), &data.fields)?;
            let hash = hash_fields(&symmetry, &data.fields)?;
            (
                quote!(let #pattern = self; #build),
                quote!(let #pattern = self; #hash),
            )
        }
        Data::Enum(data) => {
            let arms = data
                .variants
                .iter()
                .enumerate()
                .map(|(index, variant)| {
                    if let Some(attribute) =
                        variant.attrs.iter().find(|a| a.path().is_ident("rename"))
                    {
                        return Err(Error::new_spanned(
                            attribute,
                            "#[rename(...)] goes on a field, not on a variant",
                        ));
                    }
                    let path = {
                        let variant = &variant.ident;
                        quote!(#name::#variant)
                    };
                    let (pattern, build) = rebuild(&symmetry, path, &variant.fields)?;
                    let hash = hash_fields(&symmetry, &variant.fields)?;
                    Ok((
                        quote!(#pattern => #build,),
                        quote!(#pattern => {
                            ::core::hash::Hasher::write_usize(hasher, #index);
                            #hash
                        }),
                    ))
                })
                .collect::<syn::Result<Vec<_>>>()?;
            let (arms, hash_arms): (Vec<_>, Vec<_>) = arms.into_iter().unzip();
            (
                quote!(match self { #(#arms)* }),
                quote!(match self { #(#hash_arms)* }),
            )
        }
        Data::Union(_) => {
            return Err(Error::new(
                Span::call_site(),
                "RenameSessions cannot be derived for a union",
            ))
        }
    };
    // Bounds only for field types that mention a type parameter: the others are checked where
    // they are used, and a private field type may not appear in a public bound.
    let bounded: Vec<Type> = fields_of(&input.data)
        .filter(|field| plain(field).unwrap_or(false))
        .map(|field| field.ty.clone())
        .filter(|ty| mentions(ty, &params))
        .collect();
    // A field kept as it is is cloned, and hashed as it is.
    let kept: Vec<Type> = fields_of(&input.data)
        .filter(|field| !plain(field).unwrap_or(true))
        .map(|field| field.ty.clone())
        .filter(|ty| mentions(ty, &params))
        .collect();
    let where_clause = input.generics.make_where_clause();
    for ty in bounded {
        where_clause
            .predicates
            .push(parse_quote!(#ty: #symmetry::RenameSessions));
    }
    for ty in kept {
        where_clause
            .predicates
            .push(parse_quote!(#ty: ::core::clone::Clone + ::core::hash::Hash));
    }
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics #symmetry::RenameSessions for #name #type_generics
        #where_clause
        {
            fn rename_sessions(&self, renaming: &#symmetry::SessionRenaming) -> Self {
                #body
            }

            fn hash_renamed(
                &self,
                renaming: &#symmetry::SessionRenaming,
                hasher: &mut #symmetry::StableHasher,
            ) {
                #hash_body
            }
        }
    })
}

fn fields_of(data: &Data) -> Box<dyn Iterator<Item = &Field> + '_> {
    match data {
        Data::Struct(data) => Box::new(data.fields.iter()),
        Data::Enum(data) => Box::new(data.variants.iter().flat_map(|v| v.fields.iter())),
        Data::Union(_) => Box::new(std::iter::empty()),
    }
}

/// The path of the recipes crate: `#[rename(crate = ...)]` on the type, or `::zklab_recipes`.
fn crate_path(input: &DeriveInput) -> syn::Result<syn::Path> {
    let mut path = parse_quote!(::zklab_recipes);
    for attribute in input.attrs.iter().filter(|a| a.path().is_ident("rename")) {
        attribute.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                path = meta.value()?.parse()?;
                Ok(())
            } else {
                Err(meta.error("expected `crate = path`"))
            }
        })?;
    }
    Ok(path)
}

/// A pattern binding every field of `path`, and the expression that builds it renamed.
fn rebuild(symmetry: &Tokens, path: Tokens, fields: &Fields) -> syn::Result<(Tokens, Tokens)> {
    let bindings = bindings(fields);
    let values = fields
        .iter()
        .zip(&bindings)
        .map(|(field, binding)| renamed(symmetry, field, binding))
        .collect::<syn::Result<Vec<_>>>()?;
    Ok(match fields {
        Fields::Named(_) => {
            let names = fields.iter().map(|field| &field.ident);
            let names_again = names.clone();
            (
                quote!(#path { #(#names: #bindings),* }),
                quote!(#path { #(#names_again: #values),* }),
            )
        }
        Fields::Unnamed(_) => (quote!(#path(#(#bindings),*)), quote!(#path(#(#values),*))),
        Fields::Unit => (quote!(#path), quote!(#path)),
    })
}

/// The statements that hash every field of a pattern bound by [`rebuild`], as renamed.
fn hash_fields(symmetry: &Tokens, fields: &Fields) -> syn::Result<Tokens> {
    let statements = fields
        .iter()
        .zip(bindings(fields))
        .map(|(field, binding)| {
            Ok(match rule(field)?.as_deref() {
                None => {
                    quote!(#symmetry::RenameSessions::hash_renamed(#binding, renaming, hasher);)
                }
                Some("session") => {
                    quote!(#symmetry::SessionIds::hash_ids(#binding, renaming, hasher);)
                }
                Some("client") => {
                    quote!(#symmetry::ClientIds::hash_clients(#binding, renaming, hasher);)
                }
                Some("guid") => quote!(renaming.hash_guid(#binding, hasher);),
                Some(_) => quote!(::core::hash::Hash::hash(#binding, hasher);),
            })
        })
        .collect::<syn::Result<Vec<_>>>()?;
    Ok(quote!(#(#statements)*))
}

/// The name each field is bound to in a pattern.
fn bindings(fields: &Fields) -> Vec<Ident> {
    fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            field.ident.as_ref().map_or_else(
                || format_ident!("field_{i}"),
                |name| format_ident!("{name}_"),
            )
        })
        .collect()
}

/// How one field is renamed.
fn renamed(symmetry: &Tokens, field: &Field, binding: &Ident) -> syn::Result<Tokens> {
    Ok(match rule(field)?.as_deref() {
        None => quote!(#symmetry::RenameSessions::rename_sessions(#binding, renaming)),
        Some("session") => quote!(#symmetry::SessionIds::rename_ids(#binding, renaming)),
        Some("client") => quote!(#symmetry::ClientIds::rename_clients(#binding, renaming)),
        Some("guid") => quote!(renaming.guid(#binding)),
        Some(_) => quote!(::core::clone::Clone::clone(#binding)),
    })
}

/// Whether a field is renamed by its own impl (no `#[rename(...)]`).
fn plain(field: &Field) -> syn::Result<bool> {
    Ok(rule(field)?.is_none())
}

/// The field's `#[rename(...)]` rule, if any.
fn rule(field: &Field) -> syn::Result<Option<String>> {
    let mut found = None;
    for attribute in field.attrs.iter().filter(|a| a.path().is_ident("rename")) {
        attribute.parse_nested_meta(|meta| {
            let word = meta.path.get_ident().map(Ident::to_string);
            match word.as_deref() {
                Some("session" | "client" | "guid" | "keep") if found.is_some() => {
                    Err(meta.error("one `#[rename(...)]` rule per field"))
                }
                Some("session" | "client" | "guid" | "keep") => {
                    found = word;
                    Ok(())
                }
                _ => Err(meta.error("expected `session`, `client`, `guid` or `keep`")),
            }
        })?;
    }
    Ok(found)
}

/// Whether `ty` names one of `params`.
fn mentions(ty: &Type, params: &[Ident]) -> bool {
    let text = quote!(#ty).to_string();
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| params.iter().any(|param| param == word))
}
