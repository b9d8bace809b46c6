//! Run with `cargo run -p word-stats`, then:
//! `cargo run -p switchboard -- stream --url http://127.0.0.1:9092 "one two three"`.

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:9092").await?;
    let server = word_stats::server("http://127.0.0.1:9092", "127.0.0.1:9092")?;
    println!("word-stats on http://127.0.0.1:9092 (Ctrl-C stops it)");
    let ctrl_c = async { drop(tokio::signal::ctrl_c().await) };
    Ok(server.serve(listener, ctrl_c).await?)
}
