//! Typed indices of the simulation's arenas: a node, a flow, a port, an application. Each
//! is a `u32` in a `#[repr(transparent)]` wrapper, so it costs what the bare integer costs,
//! and a port can no longer be passed where a node or a flow is expected (nor a node where a
//! flow is). `NONE` (all ones) stands for "no such element": a switch without a route, a
//! packet that did not come from a switch input, a flow without an application, a control
//! frame that belongs to no flow.
//!
//! Packets carry typed node and flow ids (`Packet::src`, `dst`, `flow`), and so do the pure
//! models (`TcpFlow`). [`Idx`] indexes an arena by a typed id or by a bare `u32` (numbers
//! that have no type of their own, such as limiter or queue numbers).

/// Declares one id type.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// No such element.
            pub const NONE: $name = $name(u32::MAX);

            /// The index into the arena.
            #[inline(always)]
            pub const fn idx(self) -> usize {
                self.0 as usize
            }

            #[inline(always)]
            pub const fn is_none(self) -> bool {
                self.0 == u32::MAX
            }

            #[inline(always)]
            pub const fn is_some(self) -> bool {
                self.0 != u32::MAX
            }

            /// `Some(self)` unless `NONE`.
            #[inline(always)]
            pub const fn get(self) -> Option<$name> {
                if self.is_none() {
                    None
                } else {
                    Some(self)
                }
            }
        }

        impl Idx for $name {
            #[inline(always)]
            fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl Default for $name {
            /// `NONE`.
            fn default() -> $name {
                $name::NONE
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

/// An index into an arena: a typed id or a bare `u32` (ids that have no type of their own
/// yet, such as limiter or queue numbers).
pub trait Idx: Copy {
    fn idx(self) -> usize;
}

impl Idx for u32 {
    #[inline(always)]
    fn idx(self) -> usize {
        self as usize
    }
}

id_type!(
    /// A node (host or switch): index into `Network::nodes`.
    NodeId
);
id_type!(
    /// A TCP flow: index into `Hosts::flows`.
    FlowId
);
id_type!(
    /// A port (one direction of a link): index into `Network::ports`.
    PortId
);
id_type!(
    /// An application: index into `Sim::apps`.
    AppId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_bare_integers_with_a_none() {
        assert_eq!(std::mem::size_of::<PortId>(), 4);
        assert_eq!(std::mem::size_of::<Option<AppId>>(), 8);
        assert!(PortId::NONE.is_none() && PortId::default().is_none());
        assert_eq!(PortId(7).get(), Some(PortId(7)));
        assert_eq!(AppId::NONE.get(), None);
        assert_eq!(
            (AppId(3).idx(), PortId(5).to_string()),
            (3, "5".to_string())
        );
        assert_eq!((Idx::idx(7u32), Idx::idx(PortId(7))), (7, 7));
        assert_eq!(std::mem::size_of::<NodeId>(), 4);
        assert!(NodeId::NONE.is_none() && FlowId::default().is_none());
        assert_eq!(
            (NodeId(2).idx(), FlowId(9).to_string()),
            (2, "9".to_string())
        );
    }
}
