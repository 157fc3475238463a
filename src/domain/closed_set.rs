//! [`closed_set!`]: an enum of a closed set of names declared from one list, each variant with
//! the name it is stored, sent and shown by. The list makes every variant's name, its place in
//! `ALL` and the lookup by name, so a variant added to it needs nothing else.

/// Declares a fieldless enum from `Variant = "name"` lines (attributes pass through, the enum
/// always `Debug`, `Clone`, `Copy`, `PartialEq`, `Eq` and `Hash`) with:
/// - `ALL`: every variant, in the list's order, each at its [`index`](#method.index);
/// - `as_str`: its name, an exhaustive match; `Display` writes it;
/// - `named`: the variant of a name, if any.
macro_rules! closed_set {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$variant_meta])* $variant,)+
        }

        impl $name {
            /// Every variant, each at its index.
            pub const ALL: [$name; [$($name::$variant),+].len()] = [$($name::$variant),+];

            /// Its place in `ALL`.
            pub const fn index(self) -> usize {
                self as usize
            }

            /// Its name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The variant of this name, if any.
            pub fn named(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub(crate) use closed_set;

#[cfg(test)]
mod tests {
    closed_set! {
        enum Sample {
            One = "one",
            Two = "two",
        }
    }

    #[test]
    fn every_variant_is_at_its_index_and_found_by_its_name() {
        for (index, variant) in Sample::ALL.into_iter().enumerate() {
            assert_eq!(variant.index(), index);
            assert_eq!(Sample::named(variant.as_str()), Some(variant));
            assert_eq!(variant.to_string(), variant.as_str());
        }
        assert_eq!(Sample::named("three"), None);
    }
}
