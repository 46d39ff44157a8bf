use proc_macro::TokenStream;

#[proc_macro_derive(Document, attributes(seq_id))]
pub fn derive_document(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
